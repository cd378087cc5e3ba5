-- {{table}}: {{layer}} table{{of_product}}, on the project's Kafka broker for an Apache Flink SQL
-- Gateway. Created by `flinkpipe table init`; replace the columns.
CREATE TABLE IF NOT EXISTS {{table}} (
  id          STRING NOT NULL,
  payload     STRING,
  updated_at  TIMESTAMP_LTZ(3),
  PRIMARY KEY (id) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka',
  'topic' = '{{table}}',
  'properties.bootstrap.servers' = '{{bootstrap_servers}}',
  'key.format' = 'json',
  'value.format' = 'json'
);
