-- syncular install script, part 05: the error catalogue (src/errors.c).

--#include udfs/_raise-3/0.1.0.sql
--#include udfs/_raise-3/0.1.0.comment.sql

--#include udfs/error_catalog/0.1.0.sql
--#include udfs/error_catalog/0.2.0.comment.sql

--#include udfs/_raise-4/0.2.0.sql
--#include udfs/_raise-4/0.2.0.comment.sql
