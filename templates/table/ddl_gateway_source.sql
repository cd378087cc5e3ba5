-- {{table}}: {{layer}} table{{of_product}}, an append-only Kafka topic read by an Apache Flink SQL
-- Gateway. Created by `flinkpipe table init`; replace the columns.
CREATE TABLE IF NOT EXISTS {{table}} (
  id          STRING NOT NULL,
  payload     STRING,
  updated_at  TIMESTAMP_LTZ(3)
) WITH (
  'connector' = 'kafka',
  'topic' = '{{table}}',
  'properties.bootstrap.servers' = '{{bootstrap_servers}}',
  'properties.group.id' = '{{table}}',
  'scan.startup.mode' = 'earliest-offset',
  'format' = 'json'
);
