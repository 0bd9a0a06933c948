import CPostgres
import Foundation

/// A synchronous connection to a PostgreSQL database (libpq), for the store of a node that keeps
/// its data in PostgreSQL (`majlis serve --postgres URL`).
///
/// Values are sent as parameters (`?` in the statement becomes `$1`, `$2`, ...), integers as
/// `bigint`, text as `text`, bytes as `bytea` (binary) and NULL as whatever its place needs; integer columns come back as
/// `.int`, `bytea` as `.bytes`, everything else as `.text`.
/// A connection that broke is opened again before the next statement (not inside a
/// transaction: that one fails, as it would on any database). Not thread-safe by itself:
/// `Store` serializes every use behind its lock.
final class PostgresDatabase: SQLDatabase {
    let dialect = SQLDialect.postgres
    private var connection: OpaquePointer?
    private var inTransaction = false
    private var numbered: [String: String] = [:]

    /// Types of parameters and columns (PostgreSQL's `pg_type` oids).
    private static let int8: Oid = 20
    private static let text: Oid = 25
    private static let bytea: Oid = 17
    private static let integerTypes: Set<Oid> = [20, 21, 23]

    /// Seconds a connection attempt may take (unless `url` says otherwise): a server that is
    /// away must not hold a room's queue for long.
    static let connectTimeout = "5"

    /// What every session asks of the server (unless `url` sets `options` itself). A node paused
    /// or cut off inside a transaction would hold its row locks (a room's fence among them) for
    /// as long as its connection lasts, and the node taking the room over would wait on them
    /// for ever: the server ends a session idle in a transaction after 5 s (the paused node's
    /// commit then fails, so nothing it did is acknowledged), and no statement waits more than
    /// 10 s for a lock (the op is refused and may be tried again). Our own transactions run
    /// statement after statement, a few milliseconds apart on a loaded node.
    static let sessionOptions = "-c idle_in_transaction_session_timeout=5000 -c lock_timeout=10000"

    /// Connects to `url` (`postgres://user:password@host:port/database` or libpq's `key=value` form).
    init(url: String) throws {
        // libpq takes anything else as a database name and then fails on a local socket, which
        // names neither the address nor the mistake.
        let lower = url.lowercased()
        guard lower.hasPrefix("postgres://") || lower.hasPrefix("postgresql://") || url.contains("=") else {
            throw SQLFailure(description: "not a PostgreSQL address: it starts with postgres:// or postgresql:// (or is libpq's key=value form)")
        }
        // `url` fills in everything it names (expand_dbname); the timeout and options are only defaults.
        let keys = ["connect_timeout", "options", "dbname"]
        let values = [Self.connectTimeout, Self.sessionOptions, url]
        let keyPointers = keys.map { strdup($0) } + [nil]
        let valuePointers = values.map { strdup($0) } + [nil]
        defer {
            keyPointers.forEach { free($0) }
            valuePointers.forEach { free($0) }
        }
        connection = keyPointers.map { UnsafePointer($0) }.withUnsafeBufferPointer { keys in
            valuePointers.map { UnsafePointer($0) }.withUnsafeBufferPointer { values in
                PQconnectdbParams(keys.baseAddress, values.baseAddress, 1)
            }
        }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = Self.message(connection)
            // Finished here and forgotten: the object is whole, so its deinit runs too.
            PQfinish(connection)
            connection = nil
            throw SQLFailure(description: "cannot connect to PostgreSQL: \(message)")
        }
        // Notices ("relation already exists, skipping") are not errors; keep them off stderr.
        PQsetNoticeProcessor(connection, { _, _ in }, nil)
    }

    deinit { if let connection { PQfinish(connection) } }

    private static func message(_ connection: OpaquePointer?) -> String {
        guard let connection, let text = PQerrorMessage(connection) else { return "out of memory" }
        return String(cString: text).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A broken connection (the server restarted) is opened again, outside a transaction. One
    /// the server closed while it sat idle (a restart sends a notice and hangs up) is found so
    /// here, by reading what waits on its socket, rather than by failing the next statement:
    /// after an outage the first op of each node goes through instead of being refused.
    private func ensureConnected() {
        guard !inTransaction else { return }
        // An idle connection has nothing to read unless the server spoke: its goodbye, then its
        // end of file (each a read of its own; a few rounds at most).
        var rounds = 0
        while PQstatus(connection) == CONNECTION_OK, rounds < 4, Self.readable(PQsocket(connection)) {
            _ = PQconsumeInput(connection)
            rounds += 1
        }
        guard PQstatus(connection) != CONNECTION_OK else { return }
        PQreset(connection)
    }

    private static func readable(_ socket: Int32) -> Bool {
        guard socket >= 0 else { return false }
        var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, 0) > 0
    }

    func execute(_ sql: String) throws {
        ensureConnected()
        let result = PQexec(connection, sql)
        defer { PQclear(result) }
        try check(result, sql)
    }

    private func check(_ result: OpaquePointer?, _ sql: String) throws {
        let status = PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            let detail = result.flatMap { PQresultErrorMessage($0) }.map { String(cString: $0) } ?? ""
            let text = (detail.isEmpty ? Self.message(connection) : detail).trimmingCharacters(in: .whitespacesAndNewlines)
            throw SQLFailure(description: "\(text) in: \(sql)")
        }
    }

    /// `sql` with its `?` placeholders numbered as PostgreSQL wants them (none inside quotes).
    private func postgresSQL(_ sql: String) -> String {
        if let known = numbered[sql] { return known }
        var out = ""
        var count = 0
        var quote: Character?
        for character in sql {
            if let open = quote {
                if character == open { quote = nil }
                out.append(character)
            } else if character == "'" || character == "\"" {
                quote = character
                out.append(character)
            } else if character == "?" {
                count += 1
                out += "$\(count)"
            } else {
                out.append(character)
            }
        }
        numbered[sql] = out
        return out
    }

    private func perform(_ sql: String, _ values: [SQLValue]) throws -> OpaquePointer? {
        ensureConnected()
        // A NULL's type is left for PostgreSQL to infer from where it goes (so statements test
        // an absent value as `CAST(? AS TEXT) IS NULL`).
        let types = values.map { value -> Oid in
            switch value {
            case .null: 0
            case .int: Self.int8
            case .text: Self.text
            case .bytes: Self.bytea
            }
        }
        // Text parameters as C strings; bytes as they are (binary format, with their length).
        let pointers: [UnsafeMutablePointer<CChar>?] = values.map { value in
            switch value {
            case .null: nil
            case .int(let number): strdup(String(number))
            case .text(let text): strdup(text)
            case .bytes(let bytes):
                bytes.withUnsafeBytes { raw in
                    let copy = UnsafeMutablePointer<CChar>.allocate(capacity: max(1, raw.count))
                    if let base = raw.baseAddress { memcpy(copy, base, raw.count) }
                    return copy
                }
            }
        }
        defer {
            for (value, pointer) in zip(values, pointers) {
                if case .bytes = value { pointer?.deallocate() } else { free(pointer) }
            }
        }
        let lengths = values.map { value -> Int32 in
            if case .bytes(let bytes) = value { return Int32(bytes.count) }
            return 0
        }
        let formats = values.map { value -> Int32 in
            if case .bytes = value { return 1 }
            return 0
        }
        let statement = postgresSQL(sql)
        let result = pointers.map { UnsafePointer($0) }.withUnsafeBufferPointer { parameters in
            types.withUnsafeBufferPointer { types in
                lengths.withUnsafeBufferPointer { lengths in
                    formats.withUnsafeBufferPointer { formats in
                        PQexecParams(connection, statement, Int32(values.count), types.baseAddress, parameters.baseAddress, lengths.baseAddress, formats.baseAddress, 0)
                    }
                }
            }
        }
        do {
            try check(result, sql)
        } catch {
            PQclear(result)
            throw error
        }
        return result
    }

    @discardableResult
    func run(_ sql: String, _ values: [SQLValue]) throws -> Int {
        let result = try perform(sql, values)
        defer { PQclear(result) }
        return Int(String(cString: PQcmdTuples(result))) ?? 0
    }

    func query(_ sql: String, _ values: [SQLValue]) throws -> [[SQLValue]] {
        let result = try perform(sql, values)
        defer { PQclear(result) }
        let rows = PQntuples(result)
        let columns = PQnfields(result)
        let kinds = (0..<columns).map { PQftype(result, $0) }
        return (0..<rows).map { row in
            (0..<columns).map { column in
                if PQgetisnull(result, row, column) == 1 { return .null }
                let kind = kinds[Int(column)]
                if kind == Self.bytea { return .bytes(Self.unescaped(PQgetvalue(result, row, column), count: Int(PQgetlength(result, row, column)))) }
                let text = String(cString: PQgetvalue(result, row, column))
                return Self.integerTypes.contains(kind) ? Int64(text).map(SQLValue.int) ?? .null : .text(text)
            }
        }
    }

    /// A `bytea` in text form (`\x` and two hex digits a byte, PostgreSQL's default output) as its bytes.
    static func unescaped(_ text: UnsafePointer<CChar>?, count: Int) -> [UInt8] {
        guard let text, count >= 2 else { return [] }
        return text.withMemoryRebound(to: UInt8.self, capacity: count) { digits in
            func value(_ digit: UInt8) -> UInt8 {
                switch digit {
                case 48...57: digit - 48
                case 97...102: digit - 87
                case 65...70: digit - 55
                default: 0
                }
            }
            var bytes = [UInt8]()
            bytes.reserveCapacity((count - 2) / 2)
            var index = 2
            while index + 1 < count {
                bytes.append(value(digits[index]) << 4 | value(digits[index + 1]))
                index += 2
            }
            return bytes
        }
    }

    func transaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN")
        inTransaction = true
        defer { inTransaction = false }
        let result: T
        do {
            result = try body()
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
        do {
            try execute("COMMIT")
        } catch var failure as SQLFailure {
            // A COMMIT refused by a server still connected was undone; one whose connection
            // went as it was sent may have been written before the server went.
            failure.outcomeUnknown = PQstatus(connection) != CONNECTION_OK
            if !failure.outcomeUnknown { try? execute("ROLLBACK") }
            throw failure
        }
        return result
    }
}
