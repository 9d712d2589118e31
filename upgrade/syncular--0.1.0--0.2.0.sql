-- syncular 0.1.0 -> 0.2.0 (ALTER EXTENSION syncular UPDATE TO '0.2.0').
\echo Use "ALTER EXTENSION syncular UPDATE TO '0.2.0'" to load this file. \quit
