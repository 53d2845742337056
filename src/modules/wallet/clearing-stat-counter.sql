-- wallet.clearing_held of the admin statistics: the sum of every user's clearing balance, in cents.
CREATE OR REPLACE FUNCTION public.ledger_clearing_stat_counter()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
	PERFORM "stat_count"('wallet.clearing_held', NEW."balance_cents" - OLD."balance_cents");
	RETURN NULL;
END $function$;
CREATE TRIGGER ledger_clearing_stat_counter AFTER UPDATE OF balance_cents ON ledger_accounts FOR EACH ROW WHEN (new.kind = 'clearing'::text AND old.balance_cents IS DISTINCT FROM new.balance_cents) EXECUTE FUNCTION ledger_clearing_stat_counter();
