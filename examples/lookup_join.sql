-- Lookup join (LookupJoin): each order looks its user up by id in a
-- lookup table, FOR SYSTEM_TIME AS OF its processing-time attribute
-- (Flink's LookupJoinITCase data). The users table is bounded: the job
-- loads it once into an index on the lookup key, and each probe record
-- is one lookup there (through the partial cache: a repeated id is a
-- hit). A LEFT join keeps orders without a user, padded with NULLs; the
-- condition on the users' columns only (age > 20) filters the rows each
-- lookup finds.
--   1  12  Julian        NULL
--   2  15  Hello         Jark
--   3  15  Fabian        Fabian
--   8  11  Hello world   NULL
--   9  12  Hello world!  NULL
--   2  10  Again         Jark
--   1  11  Julian again  NULL

CREATE TABLE orders (
  id      BIGINT,
  len     INT,
  content STRING,
  proc_time AS PROCTIME()
) WITH (
  'connector' = 'filesystem',
  'path'      = 'lookup_orders.csv',
  'format'    = 'csv'
);

CREATE TABLE users (
  age  INT,
  id   BIGINT,
  name STRING
) WITH (
  'connector' = 'filesystem',
  'path'      = 'lookup_users.csv',
  'format'    = 'csv',
  'lookup.cache' = 'PARTIAL',
  'lookup.partial-cache.max-rows' = '100'
);

CREATE TABLE enriched (
  id      BIGINT,
  len     INT,
  content STRING,
  name    STRING
) WITH ('connector' = 'blackhole');

INSERT INTO enriched
SELECT o.id, o.len, o.content, u.name
FROM orders AS o
LEFT JOIN users FOR SYSTEM_TIME AS OF o.proc_time AS u
  ON o.id = u.id AND u.age > 20;
