COMMENT ON TYPE syncular.sync_reactions IS
'The rows of the shard table syncular.sync_reactions, as syncular.claim_reactions returns them through the router.';
