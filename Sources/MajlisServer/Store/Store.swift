import Foundation
import MajlisProtocol
import MajlisRoom
import MajlisTransport

/// Everything Majlis keeps durably: rooms, bans, attributes, chat history, idempotency keys, the
/// webhook outbox, and conversations with their messages. In one SQLite database (WAL mode) under the data directory by default, or in
/// PostgreSQL (`majlis serve --postgres URL`); the same statements on either, each with its own
/// versioned schema migrations.
///
/// Thread-safe: `lock` serializes every use of `database` and `writes` (audited: no other access), so there is
/// one writer. Writes are committed before the call returns, so an acknowledged chat message
/// survives a crash of the process.
public final class Store: @unchecked Sendable {
    /// A room as loaded back from disk.
    public struct LoadedRoom: Sendable {
        public var stored: StoredRoom
        public var bans: [String: Int64]
        public var lastMsgId: Int64
        public var recentChats: [(user: String, clientMsgId: String, msgId: Int64, ts: Int64)]
        /// Attributes kept across restarts (those not deleted when their owner leaves).
        public var attributes: [String: AttributeValue]
    }

    /// A remembered answer to a request that carried a `rid`.
    public struct RememberedReply: Sendable, Equatable {
        public var ok: Bool
        /// The JSON of `data` (when ok) or of `error`.
        public var body: Data
        public var at: Int64

        public init(ok: Bool, body: Data, at: Int64) {
            self.ok = ok
            self.body = body
            self.at = at
        }
    }

    private let lock = NSLock()
    private var writes = DelayHistogram()
    /// The last failure of the database itself (not a refused fence), cleared by the next use that works.
    private var failure: String?
    private let database: any SQLDatabase
    /// Where the store is: the SQLite file, or the PostgreSQL server (without credentials).
    public let path: String

    /// SQLite's schema migrations, applied in order; `PRAGMA user_version` records how many ran.
    static let sqliteMigrations: [String] = [
        """
        CREATE TABLE rooms (id TEXT PRIMARY KEY, owner TEXT NOT NULL, created_at INTEGER NOT NULL, data TEXT NOT NULL);
        CREATE TABLE bans (room TEXT NOT NULL, user TEXT NOT NULL, until INTEGER NOT NULL, PRIMARY KEY (room, user));
        CREATE TABLE chat (
            room TEXT NOT NULL, msg_id INTEGER NOT NULL, sender TEXT NOT NULL, sender_name TEXT NOT NULL,
            type TEXT NOT NULL, text TEXT, payload TEXT, ts INTEGER NOT NULL, client_msg_id TEXT NOT NULL,
            PRIMARY KEY (room, msg_id));
        CREATE UNIQUE INDEX chat_client_id ON chat (room, sender, client_msg_id);
        CREATE TABLE request_replies (
            user TEXT NOT NULL, rid TEXT NOT NULL, at INTEGER NOT NULL, ok INTEGER NOT NULL, body TEXT NOT NULL,
            PRIMARY KEY (user, rid));
        CREATE INDEX request_replies_at ON request_replies (at);
        """,
        """
        CREATE INDEX rooms_owner ON rooms (owner);
        CREATE INDEX chat_ts ON chat (ts);
        """,
        """
        CREATE TABLE webhook_rooms (room TEXT PRIMARY KEY, seq INTEGER NOT NULL);
        CREATE TABLE webhook_events (
            id INTEGER PRIMARY KEY, event_id TEXT NOT NULL UNIQUE, room TEXT NOT NULL, seq INTEGER NOT NULL,
            type TEXT NOT NULL, body TEXT NOT NULL, created_at INTEGER NOT NULL);
        CREATE TABLE webhook_deliveries (
            event INTEGER NOT NULL REFERENCES webhook_events (id) ON DELETE CASCADE, endpoint TEXT NOT NULL,
            room TEXT NOT NULL, state TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, next_attempt_at INTEGER NOT NULL,
            delivered_at INTEGER, last_error TEXT, PRIMARY KEY (endpoint, event));
        CREATE INDEX webhook_pending ON webhook_deliveries (endpoint, room, event) WHERE state = 'pending';
        CREATE INDEX webhook_state ON webhook_deliveries (state, event);
        """,
        """
        CREATE TABLE attributes (room TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, owner TEXT NOT NULL, PRIMARY KEY (room, key));
        """,
        """
        CREATE TABLE room_fences (room TEXT PRIMARY KEY, fence INTEGER NOT NULL);
        """,
        """
        CREATE TABLE conversations (
            id TEXT PRIMARY KEY, kind TEXT NOT NULL, title TEXT, owner TEXT NOT NULL, created_at INTEGER NOT NULL,
            last_seq INTEGER NOT NULL, last_ts INTEGER NOT NULL);
        CREATE TABLE conversation_members (
            conversation TEXT NOT NULL, "user" TEXT NOT NULL, role TEXT NOT NULL, joined_at INTEGER NOT NULL,
            read_seq INTEGER NOT NULL DEFAULT 0, muted INTEGER NOT NULL DEFAULT 0, pinned INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (conversation, "user"));
        CREATE INDEX conversation_members_user ON conversation_members ("user", conversation);
        CREATE TABLE messages (
            conversation TEXT NOT NULL, seq INTEGER NOT NULL, sender TEXT NOT NULL, sender_name TEXT NOT NULL, type TEXT NOT NULL,
            text TEXT, payload TEXT, fallback TEXT, reply_to INTEGER, mentions TEXT, ts INTEGER NOT NULL, client_msg_id TEXT NOT NULL,
            edited_at INTEGER, revoked_by TEXT, PRIMARY KEY (conversation, seq));
        CREATE UNIQUE INDEX messages_client_id ON messages (conversation, sender, client_msg_id);
        CREATE TABLE blocks ("user" TEXT NOT NULL, blocked TEXT NOT NULL, at INTEGER NOT NULL, PRIMARY KEY ("user", blocked));
        """,
        """
        CREATE VIRTUAL TABLE message_search USING fts5(terms, conversation UNINDEXED, seq UNINDEXED, tokenize = 'unicode61 remove_diacritics 0');
        CREATE TABLE held_messages (
            id TEXT PRIMARY KEY, conversation TEXT NOT NULL, sender TEXT NOT NULL, sender_name TEXT NOT NULL, recipient TEXT NOT NULL,
            type TEXT NOT NULL, text TEXT, payload TEXT, fallback TEXT, reply_to INTEGER, mentions TEXT, client_msg_id TEXT NOT NULL,
            at INTEGER NOT NULL);
        CREATE UNIQUE INDEX held_messages_client_id ON held_messages (conversation, sender, client_msg_id);
        ALTER TABLE conversations ADD COLUMN access TEXT NOT NULL DEFAULT 'private';
        ALTER TABLE conversations ADD COLUMN about TEXT;
        ALTER TABLE conversations ADD COLUMN terms TEXT NOT NULL DEFAULT '';
        CREATE INDEX conversations_public ON conversations (access) WHERE access <> 'private';
        ALTER TABLE conversation_members ADD COLUMN muted_until INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE messages ADD COLUMN featured_at INTEGER;
        CREATE TABLE conversation_requests (
            conversation TEXT NOT NULL, "user" TEXT NOT NULL, name TEXT NOT NULL, note TEXT, at INTEGER NOT NULL, PRIMARY KEY (conversation, "user"));
        """,
        """
        CREATE TABLE uploads (
            id TEXT PRIMARY KEY, owner TEXT NOT NULL, length INTEGER NOT NULL, received INTEGER NOT NULL DEFAULT 0, mime TEXT NOT NULL,
            metadata TEXT NOT NULL, created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL, completed_at INTEGER);
        CREATE INDEX uploads_owner ON uploads (owner) WHERE completed_at IS NULL;
        CREATE INDEX uploads_expiry ON uploads (expires_at) WHERE completed_at IS NULL;
        CREATE TABLE upload_chunks (upload TEXT NOT NULL, start INTEGER NOT NULL, size INTEGER NOT NULL, data BLOB NOT NULL, PRIMARY KEY (upload, start));
        CREATE TABLE media_links (media TEXT NOT NULL, conversation TEXT NOT NULL, PRIMARY KEY (media, conversation));
        """,
        """
        CREATE TABLE session_revocations ("user" TEXT PRIMARY KEY, revoked_at INTEGER NOT NULL, reason TEXT NOT NULL);
        """,
        """
        CREATE TABLE user_presence ("user" TEXT PRIMARY KEY, share TEXT NOT NULL DEFAULT 'contacts', last_seen INTEGER);
        CREATE TABLE presence_nodes ("user" TEXT NOT NULL, node TEXT NOT NULL, since INTEGER NOT NULL, PRIMARY KEY ("user", node));
        CREATE INDEX presence_nodes_node ON presence_nodes (node);
        """,
        """
        CREATE TABLE packs (
            sha256 TEXT PRIMARY KEY, id TEXT NOT NULL, kind TEXT NOT NULL, manifest TEXT NOT NULL, size INTEGER NOT NULL, data BLOB NOT NULL,
            created_at INTEGER NOT NULL, replaced_at INTEGER);
        CREATE INDEX packs_current ON packs (id) WHERE replaced_at IS NULL;
        """,
        """
        CREATE TABLE gifts (
            room TEXT NOT NULL, key TEXT NOT NULL, giver TEXT NOT NULL, receiver TEXT NOT NULL, seat INTEGER, pack TEXT NOT NULL, item TEXT NOT NULL,
            count INTEGER NOT NULL, ts INTEGER NOT NULL, PRIMARY KEY (room, key));
        CREATE INDEX gifts_room_ts ON gifts (room, ts);
        """,
        """
        CREATE TABLE log_requests (
            id TEXT PRIMARY KEY, "user" TEXT NOT NULL, since INTEGER NOT NULL, until INTEGER, reason TEXT, asked_at INTEGER NOT NULL,
            media TEXT, delivered_at INTEGER);
        CREATE INDEX log_requests_pending ON log_requests ("user") WHERE delivered_at IS NULL;
        """,
    ]

    /// PostgreSQL's schema migrations, the same tables as SQLite's (64-bit integers, binary
    /// ordering of ids); `majlis_schema` records how many ran.
    static let postgresMigrations: [String] = [
        """
        CREATE TABLE rooms (id TEXT COLLATE "C" PRIMARY KEY, owner TEXT NOT NULL, created_at BIGINT NOT NULL, data TEXT NOT NULL);
        CREATE TABLE bans (room TEXT NOT NULL, "user" TEXT NOT NULL, until BIGINT NOT NULL, PRIMARY KEY (room, "user"));
        CREATE TABLE chat (
            room TEXT NOT NULL, msg_id BIGINT NOT NULL, sender TEXT NOT NULL, sender_name TEXT NOT NULL,
            type TEXT NOT NULL, text TEXT, payload TEXT, ts BIGINT NOT NULL, client_msg_id TEXT NOT NULL,
            PRIMARY KEY (room, msg_id));
        CREATE UNIQUE INDEX chat_client_id ON chat (room, sender, client_msg_id);
        CREATE TABLE request_replies (
            "user" TEXT NOT NULL, rid TEXT NOT NULL, at BIGINT NOT NULL, ok INTEGER NOT NULL, body TEXT NOT NULL,
            PRIMARY KEY ("user", rid));
        CREATE INDEX request_replies_at ON request_replies (at);
        CREATE INDEX rooms_owner ON rooms (owner);
        CREATE INDEX chat_ts ON chat (ts);
        CREATE TABLE webhook_rooms (room TEXT PRIMARY KEY, seq BIGINT NOT NULL);
        CREATE TABLE webhook_events (
            id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, event_id TEXT NOT NULL UNIQUE, room TEXT NOT NULL, seq BIGINT NOT NULL,
            type TEXT NOT NULL, body TEXT NOT NULL, created_at BIGINT NOT NULL);
        CREATE TABLE webhook_deliveries (
            event BIGINT NOT NULL REFERENCES webhook_events (id) ON DELETE CASCADE, endpoint TEXT NOT NULL,
            room TEXT NOT NULL, state TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, next_attempt_at BIGINT NOT NULL,
            delivered_at BIGINT, last_error TEXT, PRIMARY KEY (endpoint, event));
        CREATE INDEX webhook_pending ON webhook_deliveries (endpoint, room, event) WHERE state = 'pending';
        CREATE INDEX webhook_state ON webhook_deliveries (state, event);
        """,
        """
        CREATE TABLE attributes (room TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, owner TEXT NOT NULL, PRIMARY KEY (room, key));
        """,
        """
        CREATE TABLE room_fences (room TEXT COLLATE "C" PRIMARY KEY, fence BIGINT NOT NULL);
        """,
        """
        CREATE TABLE conversations (
            id TEXT COLLATE "C" PRIMARY KEY, kind TEXT NOT NULL, title TEXT, owner TEXT NOT NULL, created_at BIGINT NOT NULL,
            last_seq BIGINT NOT NULL, last_ts BIGINT NOT NULL);
        CREATE TABLE conversation_members (
            conversation TEXT COLLATE "C" NOT NULL, "user" TEXT COLLATE "C" NOT NULL, role TEXT NOT NULL, joined_at BIGINT NOT NULL,
            read_seq BIGINT NOT NULL DEFAULT 0, muted INTEGER NOT NULL DEFAULT 0, pinned INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (conversation, "user"));
        CREATE INDEX conversation_members_user ON conversation_members ("user", conversation);
        CREATE TABLE messages (
            conversation TEXT COLLATE "C" NOT NULL, seq BIGINT NOT NULL, sender TEXT NOT NULL, sender_name TEXT NOT NULL, type TEXT NOT NULL,
            text TEXT, payload TEXT, fallback TEXT, reply_to BIGINT, mentions TEXT, ts BIGINT NOT NULL, client_msg_id TEXT NOT NULL,
            edited_at BIGINT, revoked_by TEXT, PRIMARY KEY (conversation, seq));
        CREATE UNIQUE INDEX messages_client_id ON messages (conversation, sender, client_msg_id);
        CREATE TABLE blocks ("user" TEXT COLLATE "C" NOT NULL, blocked TEXT COLLATE "C" NOT NULL, at BIGINT NOT NULL, PRIMARY KEY ("user", blocked));
        """,
        """
        CREATE TABLE message_search (conversation TEXT COLLATE "C" NOT NULL, seq BIGINT NOT NULL, terms TSVECTOR NOT NULL, PRIMARY KEY (conversation, seq));
        CREATE INDEX message_search_terms ON message_search USING GIN (terms);
        CREATE TABLE held_messages (
            id TEXT COLLATE "C" PRIMARY KEY, conversation TEXT COLLATE "C" NOT NULL, sender TEXT NOT NULL, sender_name TEXT NOT NULL,
            recipient TEXT NOT NULL, type TEXT NOT NULL, text TEXT, payload TEXT, fallback TEXT, reply_to BIGINT, mentions TEXT,
            client_msg_id TEXT NOT NULL, at BIGINT NOT NULL);
        CREATE UNIQUE INDEX held_messages_client_id ON held_messages (conversation, sender, client_msg_id);
        ALTER TABLE conversations ADD COLUMN access TEXT NOT NULL DEFAULT 'private';
        ALTER TABLE conversations ADD COLUMN about TEXT;
        ALTER TABLE conversations ADD COLUMN terms TEXT NOT NULL DEFAULT '';
        CREATE INDEX conversations_public ON conversations (access) WHERE access <> 'private';
        ALTER TABLE conversation_members ADD COLUMN muted_until BIGINT NOT NULL DEFAULT 0;
        ALTER TABLE messages ADD COLUMN featured_at BIGINT;
        CREATE TABLE conversation_requests (
            conversation TEXT COLLATE "C" NOT NULL, "user" TEXT COLLATE "C" NOT NULL, name TEXT NOT NULL, note TEXT, at BIGINT NOT NULL,
            PRIMARY KEY (conversation, "user"));
        """,
        """
        CREATE TABLE uploads (
            id TEXT COLLATE "C" PRIMARY KEY, owner TEXT COLLATE "C" NOT NULL, length BIGINT NOT NULL, received BIGINT NOT NULL DEFAULT 0,
            mime TEXT NOT NULL, metadata TEXT NOT NULL, created_at BIGINT NOT NULL, expires_at BIGINT NOT NULL, completed_at BIGINT);
        CREATE INDEX uploads_owner ON uploads (owner) WHERE completed_at IS NULL;
        CREATE INDEX uploads_expiry ON uploads (expires_at) WHERE completed_at IS NULL;
        CREATE TABLE upload_chunks (
            upload TEXT COLLATE "C" NOT NULL, start BIGINT NOT NULL, size BIGINT NOT NULL, data BYTEA NOT NULL, PRIMARY KEY (upload, start));
        CREATE TABLE media_links (media TEXT COLLATE "C" NOT NULL, conversation TEXT COLLATE "C" NOT NULL, PRIMARY KEY (media, conversation));
        """,
        """
        CREATE TABLE session_revocations ("user" TEXT COLLATE "C" PRIMARY KEY, revoked_at BIGINT NOT NULL, reason TEXT NOT NULL);
        """,
        """
        CREATE TABLE user_presence ("user" TEXT COLLATE "C" PRIMARY KEY, share TEXT NOT NULL DEFAULT 'contacts', last_seen BIGINT);
        CREATE TABLE presence_nodes ("user" TEXT COLLATE "C" NOT NULL, node TEXT COLLATE "C" NOT NULL, since BIGINT NOT NULL, PRIMARY KEY ("user", node));
        CREATE INDEX presence_nodes_node ON presence_nodes (node);
        """,
        """
        CREATE TABLE packs (
            sha256 TEXT COLLATE "C" PRIMARY KEY, id TEXT COLLATE "C" NOT NULL, kind TEXT NOT NULL, manifest TEXT NOT NULL, size BIGINT NOT NULL,
            data BYTEA NOT NULL, created_at BIGINT NOT NULL, replaced_at BIGINT);
        CREATE INDEX packs_current ON packs (id) WHERE replaced_at IS NULL;
        """,
        """
        CREATE TABLE gifts (
            room TEXT COLLATE "C" NOT NULL, key TEXT COLLATE "C" NOT NULL, giver TEXT COLLATE "C" NOT NULL, receiver TEXT COLLATE "C" NOT NULL,
            seat INTEGER, pack TEXT NOT NULL, item TEXT NOT NULL, count BIGINT NOT NULL, ts BIGINT NOT NULL, PRIMARY KEY (room, key));
        CREATE INDEX gifts_room_ts ON gifts (room, ts);
        """,
        """
        CREATE TABLE log_requests (
            id TEXT COLLATE "C" PRIMARY KEY, "user" TEXT COLLATE "C" NOT NULL, since BIGINT NOT NULL, until BIGINT, reason TEXT,
            asked_at BIGINT NOT NULL, media TEXT COLLATE "C", delivered_at BIGINT);
        CREATE INDEX log_requests_pending ON log_requests ("user") WHERE delivered_at IS NULL;
        """,
    ]

    /// Opens (creating if needed) the SQLite database in `directory`.
    public init(directory: String) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        path = (directory as NSString).appendingPathComponent("majlis.sqlite")
        let database = try SQLiteDatabase(path: path)
        // A file that is not a store, or a damaged one, is refused at start, naming it, rather
        // than served until a room fails to load.
        do {
            try database.execute("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;")
            let check = try database.query("PRAGMA quick_check", [])
            guard check.count == 1, case .text("ok") = check[0][0] else {
                throw SQLFailure(description: check.prefix(3).compactMap { row -> String? in if case .text(let text) = row.first { return text } else { return nil } }.joined(separator: "; "))
            }
        } catch {
            throw SQLFailure(description: "\(path) is not a sound Majlis store (\(error)); restore it from a backup (docs/deploy.md)")
        }
        try Self.migrate(database, at: path)
        self.database = database
    }

    /// Connects to the PostgreSQL database at `url` and brings its schema up to date.
    public init(postgres url: String) throws {
        let database = try PostgresDatabase(url: url)
        path = Self.withoutCredentials(url)
        try Self.migrate(database, at: path)
        self.database = database
    }

    /// `url` with any password left out (for messages).
    static func withoutCredentials(_ url: String) -> String {
        guard var parts = URLComponents(string: url), parts.password != nil else {
            return url.replacingOccurrences(of: #"password=\S*"#, with: "password=***", options: .regularExpression)
        }
        parts.percentEncodedPassword = "***"
        return parts.string ?? "postgres"
    }

    /// The migrations of `database`'s dialect.
    static func migrations(_ dialect: SQLDialect) -> [String] {
        dialect == .sqlite ? sqliteMigrations : postgresMigrations
    }

    /// What a migration needs done that its SQL does not do, run in its transaction after it.
    static func completing(migration number: Int, of dialect: SQLDialect) -> ((any SQLDatabase) throws -> Void)? {
        switch (dialect, number) {
        case (.sqlite, 7), (.postgres, 5): return indexStoredMessages  // messages stored before the search index
        default: return nil
        }
    }

    /// How many migrations the schema has had.
    static func version(of database: any SQLDatabase) throws -> Int {
        switch database.dialect {
        case .sqlite:
            return Int(try database.query("PRAGMA user_version").first?.first?.int ?? 0)
        case .postgres:
            try database.execute("CREATE TABLE IF NOT EXISTS majlis_schema (version INTEGER NOT NULL)")
            return Int(try database.query("SELECT MAX(version) FROM majlis_schema").first?.first?.int ?? 0)
        }
    }

    /// Applies the migrations `database` has not had, each in its own transaction; refuses a
    /// schema newer than this majlis knows.
    static func migrate(_ database: any SQLDatabase, at path: String) throws {
        // Servers starting together on one PostgreSQL database migrate one after the other.
        // However long another's migrations take: no lock limit on this wait.
        if database.dialect == .postgres {
            try database.execute("SET lock_timeout = 0")
            try database.execute("SELECT pg_advisory_lock(7880)")
            try database.execute("RESET lock_timeout")
        }
        defer { if database.dialect == .postgres { try? database.execute("SELECT pg_advisory_unlock(7880)") } }
        let migrations = migrations(database.dialect)
        let version = try version(of: database)
        if version > migrations.count {
            throw SQLFailure(description: "\(path) has schema \(version), newer than this majlis (\(migrations.count))")
        }
        for (index, migration) in migrations.enumerated() where index >= version {
            try database.transaction {
                try database.execute(migration)
                try completing(migration: index + 1, of: database.dialect)?(database)
                switch database.dialect {
                case .sqlite: try database.execute("PRAGMA user_version = \(index + 1)")
                case .postgres: try database.run("INSERT INTO majlis_schema (version) VALUES (?)", .int(Int64(index + 1)))
                }
            }
        }
    }

    /// Copies the store in `directory` to the new file `target`, consistently, while a server may
    /// be using it (one read transaction: SQLite's `VACUUM INTO`); returns the copy's schema version.
    /// The copy is a whole store: put it in a data directory as `majlis.sqlite` to restore it.
    public static func backup(directory: String, to target: String) throws -> Int {
        let source = (directory as NSString).appendingPathComponent("majlis.sqlite")
        guard FileManager.default.fileExists(atPath: source) else { throw SQLFailure(description: "no store at \(source)") }
        guard !FileManager.default.fileExists(atPath: target) else { throw SQLFailure(description: "\(target) exists already") }
        let database = try SQLiteDatabase(path: source, readOnly: true)
        _ = try database.run("VACUUM INTO ?", .text(target))
        let copy = try SQLiteDatabase(path: target, readOnly: true)
        guard try copy.query("PRAGMA integrity_check").first?.first == .text("ok") else {
            throw SQLFailure(description: "the copy at \(target) failed SQLite's integrity check")
        }
        return Int(try copy.query("PRAGMA user_version").first?.first?.int ?? 0)
    }

    /// The schema version in use.
    public var schemaVersion: Int {
        (try? withDatabase { try Self.version(of: $0) }) ?? 0
    }

    /// Refuses (true) or allows writes from now on, as a full or read-only disk would: for
    /// operators' drills and for tests of what a failed write does.
    public func setReadOnly(_ readOnly: Bool) throws {
        try withDatabase { db in
            switch db.dialect {
            case .sqlite: try db.execute("PRAGMA query_only = \(readOnly ? "ON" : "OFF")")
            case .postgres: try db.execute("SET default_transaction_read_only = \(readOnly ? "on" : "off")")
            }
        }
    }

    /// How long each write took (lock wait included), since the store opened.
    public var writeDelays: DelayHistogram { lock.withLock { writes } }

    /// Whether the database answered its last use: nil, or what failed (for `/healthz`).
    public var failing: String? { lock.withLock { failure } }

    /// Uses the database as a write would, touching no row, so `failing` is current even while
    /// nothing is written: a closed connection, a lost file or a read-only disk shows within one
    /// check. Called off the service thread (the sweeper's own queue).
    public func check() {
        _ = try? writing { db in try db.run("UPDATE room_fences SET fence = fence WHERE room = ?", .text("")) }
    }

    /// A write: timed into `writeDelays`.
    @discardableResult
    func writing<T>(_ body: (any SQLDatabase) throws -> T) throws -> T {
        let start = MonotonicClock.nanoseconds()
        lock.lock()
        defer {
            writes.record(microseconds: MonotonicClock.microseconds(since: start))
            lock.unlock()
        }
        return try noting { try body(database) }
    }

    @discardableResult
    func withDatabase<T>(_ body: (any SQLDatabase) throws -> T) throws -> T {
        lock.lock()
        defer { lock.unlock() }
        return try noting { try body(database) }
    }

    /// Runs `body` (under `lock`), keeping in `failure` whether the database failed it.
    private func noting<T>(_ body: () throws -> T) throws -> T {
        do {
            let result = try body()
            failure = nil
            return result
        } catch let error as SQLFailure {
            failure = error.description
            throw error
        }
    }

    // MARK: Rooms

    public func saveRoom(_ room: StoredRoom) throws {
        try writing { try Self.saveRoom(room, in: $0) }
    }

    static func saveRoom(_ room: StoredRoom, in db: any SQLDatabase) throws {
        let data = String(decoding: try JSONEncoder().encode(room), as: UTF8.self)
        try db.run(
            "INSERT INTO rooms (id, owner, created_at, data) VALUES (?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET owner = excluded.owner, data = excluded.data",
            .text(room.id), .text(room.owner), .int(room.createdAt), .text(data))
    }

    // MARK: Fencing

    /// A node's write for a room it no longer holds: another node has taken the room since
    /// (a newer fence), so nothing of the write was kept.
    public struct Fenced: Error, CustomStringConvertible {
        public let room: String
        public let fence: Int64
        public var description: String { "room \(room) was taken over by another node (fence \(fence) is stale)" }
    }

    /// Takes room `id` for a node (of a cluster) about to load it: a fence greater than any
    /// before for this room, which every later write for it must carry (`commit`, `createRoom`);
    /// the writes of whoever held an older one are refused from now on.
    public func takeFence(_ id: String) throws -> Int64 {
        try writing { db in
            try db.transaction {
                try db.run(
                    "INSERT INTO room_fences (room, fence) VALUES (?, 1) ON CONFLICT (room) DO UPDATE SET fence = room_fences.fence + 1", .text(id))
                guard let fence = try db.query("SELECT fence FROM room_fences WHERE room = ?", .text(id)).first?.first?.int else {
                    throw SQLFailure(description: "room \(id) has no fence after taking one")
                }
                return fence
            }
        }
    }

    /// Room `id`'s newest fence (nil: no node ever took it).
    public func fence(of id: String) throws -> Int64? {
        try withDatabase { db in try db.query("SELECT fence FROM room_fences WHERE room = ?", .text(id)).first?.first?.int }
    }

    /// Refuses (throws `Fenced`) unless `fence` is still room `id`'s newest; in a transaction,
    /// holds the fence's row (PostgreSQL) so no node takes the room until the write is done.
    static func check(fence: Int64?, room id: String, in db: any SQLDatabase) throws {
        guard let fence else { return }
        guard try db.run("UPDATE room_fences SET fence = ? WHERE room = ? AND fence = ?", .int(fence), .text(id), .int(fence)) == 1 else {
            throw Fenced(room: id, fence: fence)
        }
    }

    public func deleteRoom(_ id: String) throws {
        try writing { db in try db.transaction { try Self.deleteRoom(id, in: db) } }
    }

    static func deleteRoom(_ id: String, in db: any SQLDatabase) throws {
        try db.run("DELETE FROM rooms WHERE id = ?", .text(id))
        try db.run("DELETE FROM bans WHERE room = ?", .text(id))
        try db.run("DELETE FROM chat WHERE room = ?", .text(id))
        try db.run("DELETE FROM attributes WHERE room = ?", .text(id))
        try db.run("DELETE FROM gifts WHERE room = ?", .text(id))
    }

    public func roomExists(_ id: String) throws -> Bool {
        try withDatabase { try !$0.query("SELECT 1 FROM rooms WHERE id = ?", .text(id)).isEmpty }
    }

    /// How many stored rooms `owner` owns.
    public func roomCount(ownedBy owner: String) throws -> Int {
        try withDatabase { Int(try $0.query("SELECT COUNT(*) FROM rooms WHERE owner = ?", .text(owner)).first?.first?.int ?? 0) }
    }

    /// Ids of every stored room.
    public func roomIds() throws -> [String] {
        try withDatabase { try $0.query("SELECT id FROM rooms ORDER BY created_at").compactMap { $0.first?.text } }
    }

    /// Stored rooms ordered by id, after `after`, at most `limit`, only `owner`'s when given.
    public func listRooms(after: String?, limit: Int, owner: String?) throws -> [StoredRoom] {
        try withDatabase { db in
            let rows = try db.query(
                "SELECT data FROM rooms WHERE id > ? AND (CAST(? AS TEXT) IS NULL OR owner = ?) ORDER BY id LIMIT ?",
                .text(after ?? ""), owner.map(SQLValue.text) ?? .null, owner.map(SQLValue.text) ?? .null,
                .int(Int64(limit)))
            return try rows.compactMap { row in
                guard let json = row.first?.text else { return nil }
                return try JSONDecoder().decode(StoredRoom.self, from: Data(json.utf8))
            }
        }
    }

    /// Loads a room with its bans, its last chat id and the recent client message ids.
    public func loadRoom(_ id: String, now: Int64, recentChats: Int = 10_000) throws -> LoadedRoom? {
        try withDatabase { db in
            guard let json = try db.query("SELECT data FROM rooms WHERE id = ?", .text(id)).first?.first?.text else { return nil }
            let stored = try JSONDecoder().decode(StoredRoom.self, from: Data(json.utf8))
            var bans: [String: Int64] = [:]
            for row in try db.query("SELECT \"user\", until FROM bans WHERE room = ? AND until > ?", .text(id), .int(now)) {
                if let user = row[0].text, let until = row[1].int { bans[user] = until }
            }
            let last = try db.query("SELECT MAX(msg_id) FROM chat WHERE room = ?", .text(id)).first?.first?.int ?? 0
            let recent = try db.query(
                "SELECT sender, client_msg_id, msg_id, ts FROM chat WHERE room = ? ORDER BY msg_id DESC LIMIT ?",
                .text(id), .int(Int64(recentChats)))
            let chats = recent.reversed().compactMap { row -> (String, String, Int64, Int64)? in
                guard let user = row[0].text, let client = row[1].text, let msgId = row[2].int, let ts = row[3].int else { return nil }
                return (user, client, msgId, ts)
            }
            var attributes: [String: AttributeValue] = [:]
            for row in try db.query("SELECT key, value, owner FROM attributes WHERE room = ?", .text(id)) {
                if let key = row[0].text, let value = row[1].text, let owner = row[2].text { attributes[key] = AttributeValue(value: value, owner: owner) }
            }
            return LoadedRoom(
                stored: stored, bans: bans, lastMsgId: last, recentChats: chats.map { (user: $0.0, clientMsgId: $0.1, msgId: $0.2, ts: $0.3) },
                attributes: attributes)
        }
    }

    // MARK: Bans

    public func saveBan(room: String, user: String, until: Int64) throws {
        try writing { try Self.saveBan(room: room, user: user, until: until, in: $0) }
    }

    static func saveBan(room: String, user: String, until: Int64, in db: any SQLDatabase) throws {
        try db.run(
            "INSERT INTO bans (room, \"user\", until) VALUES (?, ?, ?) ON CONFLICT (room, \"user\") DO UPDATE SET until = excluded.until",
            .text(room), .text(user), .int(until))
    }

    // MARK: Attributes

    static func saveAttributes(room: String, set: [String: AttributeValue], deleted: [String], in db: any SQLDatabase) throws {
        for key in deleted { try db.run("DELETE FROM attributes WHERE room = ? AND key = ?", .text(room), .text(key)) }
        for (key, attribute) in set.sorted(by: { $0.key < $1.key }) {
            try db.run(
                "INSERT INTO attributes (room, key, value, owner) VALUES (?, ?, ?, ?) ON CONFLICT (room, key) DO UPDATE SET value = excluded.value, owner = excluded.owner",
                .text(room), .text(key), .text(attribute.value), .text(attribute.owner))
        }
    }

    // MARK: Chat

    /// Stores an accepted message; committed when this returns.
    public func insertChat(room: String, message: ChatMessage, clientMsgId: String) throws {
        try writing { try Self.insertChat(room: room, message: message, clientMsgId: clientMsgId, in: $0) }
    }

    static func insertChat(room: String, message: ChatMessage, clientMsgId: String, in db: any SQLDatabase) throws {
        let payload = try message.payload.map { String(decoding: try JSONEncoder().encode($0), as: UTF8.self) }
        try db.run(
            "INSERT INTO chat (room, msg_id, sender, sender_name, type, text, payload, ts, client_msg_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            .text(room), .int(message.msgId), .text(message.from.id), .text(message.from.name), .text(message.type),
            message.text.map { .text($0) } ?? .null, payload.map { .text($0) } ?? .null, .int(message.ts),
            .text(clientMsgId))
    }

    /// Up to `limit` messages older than `before` (or the newest), newest first.
    public func history(room: String, before: Int64?, limit: Int) throws -> [ChatMessage] {
        try withDatabase { db in
            try db.query(
                "SELECT msg_id, sender, sender_name, type, text, payload, ts FROM chat WHERE room = ? AND msg_id < ? ORDER BY msg_id DESC LIMIT ?",
                .text(room), .int(before ?? Int64.max), .int(Int64(limit))
            ).map { row in
                ChatMessage(
                    msgId: row[0].int ?? 0, from: UserRef(id: row[1].text ?? "", name: row[2].text ?? ""), type: row[3].text ?? "text",
                    text: row[4].text, payload: row[5].text.flatMap { try? JSONParser().parse($0) },
                    ts: row[6].int ?? 0)
            }
        }
    }

    // MARK: Idempotency keys

    public func rememberReply(user: String, rid: String, reply: RememberedReply) throws {
        try writing { db in
            try db.run(
                "INSERT INTO request_replies (\"user\", rid, at, ok, body) VALUES (?, ?, ?, ?, ?) ON CONFLICT (\"user\", rid) DO UPDATE SET at = excluded.at, ok = excluded.ok, body = excluded.body",
                .text(user), .text(rid), .int(reply.at), .int(reply.ok ? 1 : 0), .text(String(decoding: reply.body, as: UTF8.self)))
        }
    }

    public func rememberedReply(user: String, rid: String, since: Int64) throws -> RememberedReply? {
        try withDatabase { db in
            guard let row = try db.query(
                "SELECT at, ok, body FROM request_replies WHERE \"user\" = ? AND rid = ? AND at >= ?", .text(user), .text(rid), .int(since)
            ).first else { return nil }
            return RememberedReply(ok: row[1].int == 1, body: Data((row[2].text ?? "{}").utf8), at: row[0].int ?? 0)
        }
    }

    /// Forgets idempotency keys older than `before`.
    public func pruneReplies(before: Int64) throws {
        try writing { db in _ = try db.run("DELETE FROM request_replies WHERE at < ?", .int(before)) }
    }

    /// Chat history retention: deletes messages older than `before` (Unix ms) and all but the
    /// newest `keep` of each room, but never a room's newest message (message ids go on from it).
    /// Returns how many were deleted.
    @discardableResult
    public func pruneChat(before: Int64, keep: Int) throws -> Int {
        try writing { db in
            let newest = "(SELECT MAX(m.msg_id) FROM chat m WHERE m.room = chat.room)"
            let old = try db.run("DELETE FROM chat WHERE ts < ? AND msg_id < \(newest)", .int(before))
            let surplus = try db.run("DELETE FROM chat WHERE msg_id <= \(newest) - ?", .int(Int64(max(1, keep))))
            return old + surplus
        }
    }

    /// Checkpoints SQLite's write-ahead log into the database file (PostgreSQL keeps its own).
    public func flush() {
        _ = try? withDatabase { db in if db.dialect == .sqlite { try db.execute("PRAGMA wal_checkpoint(TRUNCATE)") } }
    }
}
