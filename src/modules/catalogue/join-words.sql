-- Generated columns need immutable expressions; array_to_string is only stable, so tags are
-- joined through this immutable wrapper (safe: joining text with a space depends on nothing else).
CREATE OR REPLACE FUNCTION public.marketplace_join_words(words text[])
 RETURNS text
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
AS $function$ SELECT coalesce(array_to_string(words, ' '), '') $function$;
