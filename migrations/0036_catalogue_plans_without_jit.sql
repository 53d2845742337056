-- The catalogue's generic plans over a million services pass jit_above_cost, and PostgreSQL then
-- compiles each execution with LLVM (hundreds of milliseconds for a statement that reads a few
-- pages): new connections to this database run without JIT (decision 0216). A user that may not
-- alter the database leaves it to the operator (docs/operations.md).
DO $$
BEGIN
	EXECUTE format('ALTER DATABASE %I SET jit = off', current_database());
EXCEPTION WHEN insufficient_privilege THEN
	RAISE NOTICE 'jit is left as it is: set jit = off for this database (docs/operations.md)';
END $$;
