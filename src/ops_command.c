/* ops_command.c — placeholder replaced below */
#include "postgres.h"
#include "operations.h"
void
ops_command_run(const OpsRequest *req, const char *partition, const char *actor_id, SspOpValue *out)
{
	sync_raise("operation.unknown", "commands are not served yet", NULL);
}
