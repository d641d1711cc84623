import SyncCore

/// Design: the vault schema (`termhost_sync` in the configured database) and its migrations.
///
/// Access goes through functions only. The tables are granted to nobody; each function below
/// runs as the schema's owner (SECURITY DEFINER, with a fixed search_path) and first checks
/// that the calling login role (`session_user`) is a member of the vault with enough access.
/// That is the "grants per vault" choice: a team member's own PostgreSQL role reaches exactly
/// the vaults listed for it in `members`, and removing the row ends its access at its next call,
/// with an error that says so (SQLSTATE 42501), where row-level security would instead show an
/// empty vault. The functions are also one round trip each: a sync is a pull, a push, an
/// acknowledgement.
///
/// Order: `vaults.seq` is the vault's sequence, bumped by `push` inside the write transaction
/// after it locked the vault row (`SELECT ... FOR UPDATE`), so writers to one vault are
/// serialized and commit in sequence order; a reader that sees sequence N has also seen every
/// sequence below it. (A BIGSERIAL would hand out numbers before commit: a reader could pass
/// 101 while 100 is still uncommitted, and skip it forever.) A record's version is the
/// sequence of its last write.
///
/// Plans: PL/pgSQL keeps each statement's plan for the session, and one made while a vault was
/// nearly empty scans the whole table ever after (500-change pushes went from 0.3 s to 2.3 s
/// within six batches), so `pull` and `push` run with `plan_cache_mode = force_custom_plan`.
///
/// Migrations: `schema_version` holds one row per migration applied. Each runs in its own
/// transaction under an advisory lock, so two clients upgrading at once apply it once. Append
/// only; never edit a migration that has shipped.
enum PostgresSchema {
    /// The lock every migration transaction holds (`pg_advisory_xact_lock`); an arbitrary constant.
    static let migrationLock = "7450118291"
    /// The channel `push` notifies on, with "vault-id:sequence" as the payload.
    static let channel = "termhost_sync"

    /// What every migration transaction runs first: the schema and the version table.
    static let bootstrap = [
        "CREATE SCHEMA IF NOT EXISTS termhost_sync",
        "CREATE TABLE IF NOT EXISTS termhost_sync.schema_version (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())",
        "GRANT USAGE ON SCHEMA termhost_sync TO PUBLIC",
        "GRANT SELECT ON termhost_sync.schema_version TO PUBLIC",
    ]

    /// Migration N is `migrations[N - 1]`, a list of statements run in one transaction.
    static let migrations: [[String]] = [[
        """
        CREATE TABLE termhost_sync.vaults (
            id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
            name text NOT NULL UNIQUE,
            seq bigint NOT NULL DEFAULT 0,
            purged_before bigint NOT NULL DEFAULT 0)
        """,
        """
        CREATE TABLE termhost_sync.members (
            vault_id uuid NOT NULL REFERENCES termhost_sync.vaults ON DELETE CASCADE,
            role_name name NOT NULL,
            access text NOT NULL CHECK (access IN ('owner', 'editor', 'reader')),
            PRIMARY KEY (vault_id, role_name))
        """,
        // body NULL is a tombstone; digest is sha256(body) as the server stored it, so a row
        // changed behind the functions' back shows as damaged instead of being applied.
        """
        CREATE TABLE termhost_sync.records (
            vault_id uuid NOT NULL REFERENCES termhost_sync.vaults ON DELETE CASCADE,
            namespace text NOT NULL, collection text NOT NULL, key text NOT NULL,
            seq bigint NOT NULL,
            body bytea,
            deleted boolean GENERATED ALWAYS AS (body IS NULL) STORED,
            digest bytea,
            change_id text NOT NULL,
            device text NOT NULL,
            PRIMARY KEY (vault_id, namespace, collection, key))
        """,
        "CREATE UNIQUE INDEX records_feed ON termhost_sync.records (vault_id, seq)",
        // Applied change IDs: a retried push returns the version its first try got.
        """
        CREATE TABLE termhost_sync.changes (
            vault_id uuid NOT NULL REFERENCES termhost_sync.vaults ON DELETE CASCADE,
            change_id text NOT NULL,
            seq bigint NOT NULL,
            PRIMARY KEY (vault_id, change_id))
        """,
        """
        CREATE TABLE termhost_sync.devices (
            vault_id uuid NOT NULL REFERENCES termhost_sync.vaults ON DELETE CASCADE,
            device text NOT NULL,
            role_name name NOT NULL,
            acked_seq bigint NOT NULL DEFAULT 0,
            last_change_id text,
            PRIMARY KEY (vault_id, device))
        """,
        """
        CREATE FUNCTION termhost_sync.require_access(p_vault uuid, p_allowed text[]) RETURNS text
        LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
        DECLARE a text; n text;
        BEGIN
            SELECT v.name INTO n FROM termhost_sync.vaults v WHERE v.id = p_vault;
            SELECT m.access INTO a FROM termhost_sync.members m WHERE m.vault_id = p_vault AND m.role_name = session_user;
            IF a IS NULL THEN
                RAISE EXCEPTION 'role "%" is not a member of vault "%"', session_user, coalesce(n, p_vault::text)
                    USING ERRCODE = 'insufficient_privilege';
            END IF;
            IF NOT a = ANY (p_allowed) THEN
                RAISE EXCEPTION 'role "%" has % access to vault "%", which does not allow this', session_user, a, n
                    USING ERRCODE = 'insufficient_privilege';
            END IF;
            RETURN a;
        END $$
        """,
        "REVOKE EXECUTE ON FUNCTION termhost_sync.require_access(uuid, text[]) FROM PUBLIC",
        """
        CREATE FUNCTION termhost_sync.open_vault(p_name text, p_device text) RETURNS TABLE (vault_id uuid, access text)
        LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
        #variable_conflict use_column
        DECLARE v uuid; a text;
        BEGIN
            INSERT INTO termhost_sync.vaults (name) VALUES (p_name) ON CONFLICT (name) DO NOTHING RETURNING id INTO v;
            IF v IS NOT NULL THEN
                INSERT INTO termhost_sync.members VALUES (v, session_user, 'owner');
            ELSE
                SELECT id INTO v FROM termhost_sync.vaults WHERE name = p_name;
            END IF;
            a := termhost_sync.require_access(v, ARRAY['owner', 'editor', 'reader']);
            INSERT INTO termhost_sync.devices AS d (vault_id, device, role_name) VALUES (v, p_device, session_user)
                ON CONFLICT (vault_id, device) DO UPDATE SET role_name = excluded.role_name;
            RETURN QUERY SELECT v, a;
        END $$
        """,
        """
        CREATE FUNCTION termhost_sync.pull(p_vault uuid, p_after bigint, p_limit integer)
        RETURNS TABLE (seq bigint, namespace text, collection text, key text, body text, intact boolean, change_id text, device text)
        LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET plan_cache_mode = force_custom_plan AS $$
        #variable_conflict use_column
        DECLARE fence bigint;
        BEGIN
            PERFORM termhost_sync.require_access(p_vault, ARRAY['owner', 'editor', 'reader']);
            SELECT v.purged_before INTO fence FROM termhost_sync.vaults v WHERE v.id = p_vault;
            IF p_after > 0 AND p_after < fence THEN
                RAISE EXCEPTION 'cursor % is older than the tombstone fence %', p_after, fence USING ERRCODE = 'TH001';
            END IF;
            RETURN QUERY SELECT r.seq, r.namespace, r.collection, r.key, encode(r.body, 'hex'),
                    r.body IS NULL OR r.digest = sha256(r.body), r.change_id, r.device
                FROM termhost_sync.records r WHERE r.vault_id = p_vault AND r.seq > p_after ORDER BY r.seq LIMIT p_limit;
        END $$
        """,
        """
        CREATE FUNCTION termhost_sync.push(p_vault uuid, p_device text, p_changes jsonb)
        RETURNS TABLE (idx integer, applied boolean, seq bigint, body text, change_id text, device text)
        LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET plan_cache_mode = force_custom_plan AS $$
        #variable_conflict use_column
        DECLARE c jsonb; i integer := 0; known bigint; cur record; head bigint; b bytea; last_change text;
        BEGIN
            PERFORM termhost_sync.require_access(p_vault, ARRAY['owner', 'editor']);
            -- The vault row's lock serializes writers: sequence order is commit order.
            SELECT v.seq INTO head FROM termhost_sync.vaults v WHERE v.id = p_vault FOR UPDATE;
            FOR c IN SELECT value FROM jsonb_array_elements(p_changes) LOOP
                SELECT ch.seq INTO known FROM termhost_sync.changes ch WHERE ch.vault_id = p_vault AND ch.change_id = c->>'change';
                IF FOUND THEN
                    idx := i; applied := true; seq := known; body := NULL; change_id := c->>'change'; device := p_device;
                    RETURN NEXT;
                ELSE
                    SELECT r.seq, r.body, r.change_id, r.device INTO cur FROM termhost_sync.records r
                        WHERE r.vault_id = p_vault AND r.namespace = c->>'namespace' AND r.collection = c->>'collection' AND r.key = c->>'key';
                    IF coalesce(cur.seq, 0) <> coalesce((c->>'base')::bigint, 0) THEN
                        idx := i; applied := false; seq := coalesce(cur.seq, 0); body := encode(cur.body, 'hex');
                        change_id := coalesce(cur.change_id, ''); device := coalesce(cur.device, '');
                        RETURN NEXT;
                    ELSE
                        head := head + 1;
                        b := decode(c->>'body', 'hex');
                        INSERT INTO termhost_sync.records AS r (vault_id, namespace, collection, key, seq, body, digest, change_id, device)
                            VALUES (p_vault, c->>'namespace', c->>'collection', c->>'key', head, b, sha256(b), c->>'change', p_device)
                            ON CONFLICT (vault_id, namespace, collection, key) DO UPDATE
                            SET seq = excluded.seq, body = excluded.body, digest = excluded.digest,
                                change_id = excluded.change_id, device = excluded.device;
                        INSERT INTO termhost_sync.changes VALUES (p_vault, c->>'change', head);
                        last_change := c->>'change';
                        idx := i; applied := true; seq := head; body := NULL; change_id := c->>'change'; device := p_device;
                        RETURN NEXT;
                    END IF;
                END IF;
                i := i + 1;
            END LOOP;
            IF last_change IS NOT NULL THEN
                UPDATE termhost_sync.vaults v SET seq = head WHERE v.id = p_vault;
                UPDATE termhost_sync.devices d SET last_change_id = last_change WHERE d.vault_id = p_vault AND d.device = p_device;
                PERFORM pg_notify('termhost_sync', p_vault::text || ':' || head);
            END IF;
        END $$
        """,
        """
        CREATE FUNCTION termhost_sync.acknowledge(p_vault uuid, p_device text, p_seq bigint) RETURNS void
        LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
        BEGIN
            PERFORM termhost_sync.require_access(p_vault, ARRAY['owner', 'editor', 'reader']);
            UPDATE termhost_sync.devices d SET acked_seq = greatest(d.acked_seq, p_seq)
                WHERE d.vault_id = p_vault AND d.device = p_device;
        END $$
        """,
        """
        CREATE FUNCTION termhost_sync.last_change_id(p_vault uuid, p_device text) RETURNS text
        LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
        BEGIN
            PERFORM termhost_sync.require_access(p_vault, ARRAY['owner', 'editor', 'reader']);
            RETURN (SELECT d.last_change_id FROM termhost_sync.devices d WHERE d.vault_id = p_vault AND d.device = p_device);
        END $$
        """,
        // Without force the fence is the lowest sequence every known device acknowledged; with
        // force it is the head, and devices behind it reconcile in full (pull says TH001).
        """
        CREATE FUNCTION termhost_sync.purge_tombstones(p_vault uuid, p_force boolean) RETURNS integer
        LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
        DECLARE fence bigint; n integer;
        BEGIN
            PERFORM termhost_sync.require_access(p_vault, ARRAY['owner', 'editor']);
            SELECT v.seq INTO fence FROM termhost_sync.vaults v WHERE v.id = p_vault FOR UPDATE;
            IF NOT p_force THEN
                SELECT coalesce(min(d.acked_seq), 0) INTO fence FROM termhost_sync.devices d WHERE d.vault_id = p_vault;
            END IF;
            DELETE FROM termhost_sync.records r WHERE r.vault_id = p_vault AND r.body IS NULL AND r.seq <= fence;
            GET DIAGNOSTICS n = ROW_COUNT;
            UPDATE termhost_sync.vaults v SET purged_before = greatest(v.purged_before, fence) WHERE v.id = p_vault;
            RETURN n;
        END $$
        """,
        """
        CREATE FUNCTION termhost_sync.set_member(p_vault uuid, p_role name, p_access text) RETURNS void
        LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
        BEGIN
            PERFORM termhost_sync.require_access(p_vault, ARRAY['owner']);
            IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = p_role) THEN
                RAISE EXCEPTION 'role "%" does not exist', p_role USING ERRCODE = 'undefined_object';
            END IF;
            INSERT INTO termhost_sync.members AS m VALUES (p_vault, p_role, p_access)
                ON CONFLICT (vault_id, role_name) DO UPDATE SET access = excluded.access;
        END $$
        """,
        // A removed member's devices are forgotten too, so they no longer hold back the purge.
        """
        CREATE FUNCTION termhost_sync.remove_member(p_vault uuid, p_role name) RETURNS void
        LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
        BEGIN
            PERFORM termhost_sync.require_access(p_vault, ARRAY['owner']);
            DELETE FROM termhost_sync.members m WHERE m.vault_id = p_vault AND m.role_name = p_role;
            DELETE FROM termhost_sync.devices d WHERE d.vault_id = p_vault AND d.role_name = p_role;
            IF NOT EXISTS (SELECT 1 FROM termhost_sync.members m WHERE m.vault_id = p_vault AND m.access = 'owner') THEN
                RAISE EXCEPTION 'vault must keep an owner' USING ERRCODE = 'check_violation';
            END IF;
        END $$
        """,
    ], [
        // Migration 2: a device ID belongs to the role that registered it. Before, open_vault
        // re-registered any device ID to whoever opened with it, so a member with write access
        // could push as another member's device. Triggers hold it for every path that writes a
        // record or moves a device's state (push, acknowledge, open_vault), so no function
        // body of migration 1 is copied here.
        """
        CREATE FUNCTION termhost_sync.device_owner_check() RETURNS trigger
        LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
        DECLARE registered name;
        BEGIN
            -- Inside the schema's functions current_user is the schema's owner and session_user
            -- the member calling them: that is the path checked. A role writing the tables
            -- directly already owns them (or is a superuser) and is not a member's device.
            IF current_user = session_user THEN RETURN NEW; END IF;
            IF TG_TABLE_NAME = 'devices' THEN
                registered := OLD.role_name;
                IF registered = session_user AND NEW.role_name = OLD.role_name THEN RETURN NEW; END IF;
            ELSE
                SELECT d.role_name INTO registered FROM termhost_sync.devices d
                    WHERE d.vault_id = NEW.vault_id AND d.device = NEW.device;
                IF registered = session_user THEN RETURN NEW; END IF;
            END IF;
            RAISE EXCEPTION 'device "%" is registered to role "%", not to "%": a device ID belongs to the role that first used it in this vault',
                NEW.device, coalesce(registered, '(none)'), session_user USING ERRCODE = 'insufficient_privilege';
        END $$
        """,
        "REVOKE EXECUTE ON FUNCTION termhost_sync.device_owner_check() FROM PUBLIC",
        """
        CREATE TRIGGER device_owner BEFORE UPDATE ON termhost_sync.devices
            FOR EACH ROW EXECUTE FUNCTION termhost_sync.device_owner_check()
        """,
        """
        CREATE TRIGGER record_device_owner BEFORE INSERT OR UPDATE ON termhost_sync.records
            FOR EACH ROW EXECUTE FUNCTION termhost_sync.device_owner_check()
        """,
        // Membership by the vault's name: the ID form needs the vault's ID, which only the
        // schema's owner can read from the tables, so the statements an owner was told to run
        // failed for every other owner.
        """
        CREATE FUNCTION termhost_sync.set_vault_member(p_vault_name text, p_role name, p_access text) RETURNS void
        LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
        DECLARE v uuid;
        BEGIN
            SELECT id INTO v FROM termhost_sync.vaults WHERE name = p_vault_name;
            IF v IS NULL THEN RAISE EXCEPTION 'no vault "%"', p_vault_name USING ERRCODE = 'undefined_object'; END IF;
            PERFORM termhost_sync.set_member(v, p_role, p_access);
        END $$
        """,
        """
        CREATE FUNCTION termhost_sync.remove_vault_member(p_vault_name text, p_role name) RETURNS void
        LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
        DECLARE v uuid;
        BEGIN
            SELECT id INTO v FROM termhost_sync.vaults WHERE name = p_vault_name;
            IF v IS NULL THEN RAISE EXCEPTION 'no vault "%"', p_vault_name USING ERRCODE = 'undefined_object'; END IF;
            PERFORM termhost_sync.remove_member(v, p_role);
        END $$
        """,
    ], [
        // Migration 3: no record over 1 MiB is stored, whoever writes it (a member calling push
        // with a body no Termhost sends, a script on the tables): the devices refuse one unread,
        // but the server should not keep, nor send, what nobody can use.
        """
        CREATE FUNCTION termhost_sync.record_size_check() RETURNS trigger
        LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
        BEGIN
            IF octet_length(NEW.body) > 1048576 THEN
                RAISE EXCEPTION 'record %/%/% is % bytes; a vault record may hold at most 1048576',
                    NEW.namespace, NEW.collection, NEW.key, octet_length(NEW.body) USING ERRCODE = 'program_limit_exceeded';
            END IF;
            RETURN NEW;
        END $$
        """,
        "REVOKE EXECUTE ON FUNCTION termhost_sync.record_size_check() FROM PUBLIC",
        """
        CREATE TRIGGER record_size BEFORE INSERT OR UPDATE ON termhost_sync.records
            FOR EACH ROW EXECUTE FUNCTION termhost_sync.record_size_check()
        """,
    ], [
        // Migration 4: history. Every version a write stores, deletions included, is kept in
        // `history` (filled by a trigger, so every path that writes a record keeps its
        // version, and no function of earlier migrations is copied) until a purge moves the
        // vault's fence past it; a record's current version is always kept. stored_at is the
        // server's clock (the one clock every device shares); NULL for versions stored before
        // this migration, which are copied in from `records` (their current versions only).
        """
        CREATE TABLE termhost_sync.history (
            vault_id uuid NOT NULL REFERENCES termhost_sync.vaults ON DELETE CASCADE,
            seq bigint NOT NULL,
            namespace text NOT NULL, collection text NOT NULL, key text NOT NULL,
            body bytea,
            digest bytea,
            change_id text NOT NULL,
            device text NOT NULL,
            stored_at timestamptz,
            PRIMARY KEY (vault_id, seq))
        """,
        "CREATE INDEX history_record ON termhost_sync.history (vault_id, namespace, collection, key, seq)",
        """
        INSERT INTO termhost_sync.history (vault_id, seq, namespace, collection, key, body, digest, change_id, device)
            SELECT vault_id, seq, namespace, collection, key, body, digest, change_id, device FROM termhost_sync.records
        """,
        """
        CREATE FUNCTION termhost_sync.keep_history() RETURNS trigger
        LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
        BEGIN
            INSERT INTO termhost_sync.history (vault_id, seq, namespace, collection, key, body, digest, change_id, device, stored_at)
                VALUES (NEW.vault_id, NEW.seq, NEW.namespace, NEW.collection, NEW.key, NEW.body, NEW.digest, NEW.change_id, NEW.device, now())
                ON CONFLICT (vault_id, seq) DO NOTHING;
            RETURN NULL;
        END $$
        """,
        "REVOKE EXECUTE ON FUNCTION termhost_sync.keep_history() FROM PUBLIC",
        """
        CREATE TRIGGER record_history AFTER INSERT OR UPDATE ON termhost_sync.records
            FOR EACH ROW EXECUTE FUNCTION termhost_sync.keep_history()
        """,
        """
        CREATE FUNCTION termhost_sync.drop_purged_history() RETURNS trigger
        LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
        BEGIN
            DELETE FROM termhost_sync.history h WHERE h.vault_id = NEW.id AND h.seq <= NEW.purged_before
                AND NOT EXISTS (SELECT 1 FROM termhost_sync.records r WHERE r.vault_id = h.vault_id AND r.seq = h.seq);
            RETURN NULL;
        END $$
        """,
        "REVOKE EXECUTE ON FUNCTION termhost_sync.drop_purged_history() FROM PUBLIC",
        """
        CREATE TRIGGER purge_history AFTER UPDATE OF purged_before ON termhost_sync.vaults
            FOR EACH ROW WHEN (NEW.purged_before > OLD.purged_before) EXECUTE FUNCTION termhost_sync.drop_purged_history()
        """,
        // p_key NULL: every record's versions. Newest first; the digest is checked as pull does.
        """
        CREATE FUNCTION termhost_sync.history(p_vault uuid, p_namespace text, p_collection text, p_key text, p_limit integer)
        RETURNS TABLE (seq bigint, namespace text, collection text, key text, body text, intact boolean, change_id text, device text, stored_at text)
        LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET plan_cache_mode = force_custom_plan AS $$
        #variable_conflict use_column
        BEGIN
            PERFORM termhost_sync.require_access(p_vault, ARRAY['owner', 'editor', 'reader']);
            RETURN QUERY SELECT h.seq, h.namespace, h.collection, h.key, encode(h.body, 'hex'),
                    h.body IS NULL OR h.digest = sha256(h.body), h.change_id, h.device, extract(epoch FROM h.stored_at)::text
                FROM termhost_sync.history h
                WHERE h.vault_id = p_vault AND (p_key IS NULL OR (h.namespace = p_namespace AND h.collection = p_collection AND h.key = p_key))
                ORDER BY h.seq DESC LIMIT p_limit;
        END $$
        """,
    ]]

    /// Brings the schema to `migrations.count`, or says why it cannot.
    /// One round trip when it is current (the version check).
    static func migrate(_ db: PGConnection) throws(SyncBackendError) {
        var current: Int
        do {
            current = try version(db)
        } catch {
            throw PostgresBackend.translate(error)
        }
        guard current <= migrations.count else {
            throw .invalid("the vault schema in this database is version \(current), newer than this Termhost knows (\(migrations.count)): update Termhost")
        }
        while current < migrations.count {
            do {
                try db.transaction { () throws(PGError) in
                    try db.query("SELECT pg_advisory_xact_lock($1::bigint)", [migrationLock])
                    for statement in bootstrap { try db.query(statement) }
                    current = try version(db)   // another client may have just applied it
                    guard current < migrations.count else { return }
                    for statement in migrations[current] { try db.query(statement) }
                    try db.query("INSERT INTO termhost_sync.schema_version (version) VALUES ($1::integer)", [String(current + 1)])
                    current += 1
                }
            } catch {
                if error.sqlState == "42501" {
                    throw .invalid("the vault schema needs migration \(current + 1) of \(migrations.count) and this role may not apply it (\(error.message)): have the database's owner connect once with 'termhost sync now', or grant this role CREATE on the database")
                }
                throw PostgresBackend.translate(error)
            }
        }
    }

    /// The schema's version: 0 when there is none yet.
    static func version(_ db: PGConnection) throws(PGError) -> Int {
        do {
            let rows = try db.query("SELECT coalesce(max(version), 0) FROM termhost_sync.schema_version")
            return rows.count == 1 ? Int(rows[0, 0] ?? "") ?? 0 : 0
        } catch where error.sqlState == "42P01" || error.sqlState == "3F000" {   // no table, no schema
            return 0
        }
    }
}
