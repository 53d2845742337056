-- The lexicon a search corrects misspelt words against: words of titles and tags, lower case.
CREATE OR REPLACE FUNCTION public.catalogue_collect_words()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  INSERT INTO search_words (word)
    SELECT DISTINCT word FROM new_rows,
      LATERAL regexp_split_to_table(lower(new_rows.title || ' ' || marketplace_join_words(new_rows.tags)), '[^a-z0-9]+') AS word
    WHERE length(word) BETWEEN 3 AND 40
    ON CONFLICT (word) DO NOTHING;
  RETURN NULL;
END $function$;
CREATE TRIGGER services_words_insert AFTER INSERT ON services REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION catalogue_collect_words();
CREATE TRIGGER services_words_update AFTER UPDATE ON services REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION catalogue_collect_words();
