-- {{table}}: seed rows. Created by `flinkpipe table init`; list the rows.
INSERT INTO {{table}}
VALUES
  ('1', 'first', TO_TIMESTAMP_LTZ(0, 3)),
  ('2', 'second', TO_TIMESTAMP_LTZ(0, 3));
