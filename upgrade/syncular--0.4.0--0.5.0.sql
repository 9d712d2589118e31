-- syncular 0.4.0 -> 0.5.0 (ALTER EXTENSION syncular UPDATE TO '0.5.0').
\echo Use "ALTER EXTENSION syncular UPDATE TO '0.5.0'" to load this file. \quit
