-- {{table}}: reads {{sources}}. Created by `flinkpipe table init`; write the transformation.
INSERT INTO {{table}}
SELECT
  {{select_list}}
FROM {{from_clause}};
