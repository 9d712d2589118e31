# Builds an extension script from skeletons (scripts/sqlsrc.py describes the layout):
#   awk -v root=src/sql -f scripts/sql-include.awk SKELETON... > SCRIPT
# prints the skeletons' lines, each directive line replaced by the source file it names under
# root:
#   --#include udfs/<name>/<version>.sql             the file as it is
#   --#include-or-replace udfs/<name>/<version>.sql  its first line CREATE FUNCTION/PROCEDURE/VIEW
#                                                    written CREATE OR REPLACE
# A file that cannot be read, an empty one, or an or-replace of a file without CREATE
# FUNCTION/PROCEDURE is an error (exit 1).
/^--#include(-or-replace)? [^ ]+$/ {
	f = root "/" $2
	replace = ($1 == "--#include-or-replace")
	n = 0
	while ((r = (getline line < f)) > 0) {
		if (replace && line ~ /^CREATE (FUNCTION|PROCEDURE|VIEW) /) {
			sub(/^CREATE /, "CREATE OR REPLACE ", line)
			replace = 0
		}
		print line
		n++
	}
	close(f)
	if (r < 0 || n == 0) {
		print FILENAME ":" FNR ": cannot read " f > "/dev/stderr"
		exit 1
	}
	if (replace) {
		print FILENAME ":" FNR ": " f " has no CREATE FUNCTION/PROCEDURE/VIEW line to write OR REPLACE" > "/dev/stderr"
		exit 1
	}
	next
}
{ print }
