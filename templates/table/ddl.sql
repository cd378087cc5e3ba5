-- {{table}}: {{layer}} table{{of_product}}. Created by `flinkpipe table init`; replace the columns.
CREATE TABLE IF NOT EXISTS {{table}} (
  id          STRING NOT NULL,
  payload     STRING,
  updated_at  TIMESTAMP_LTZ(3),
  PRIMARY KEY (id) NOT ENFORCED
) DISTRIBUTED BY HASH(id) INTO 1 BUCKETS
WITH (
  'changelog.mode' = '{{changelog_mode}}',
  'kafka.cleanup-policy' = '{{cleanup_policy}}',
  'kafka.retention.time' = '0',
  'key.avro-registry.schema-context' = '.flink-{{cluster_type}}',
  'value.avro-registry.schema-context' = '.flink-{{cluster_type}}',
  'key.format' = 'avro-registry',
  'value.format' = 'avro-registry',
  'scan.bounded.mode' = 'unbounded',
  'scan.startup.mode' = 'earliest-offset',
  'value.fields-include' = 'all'
);
