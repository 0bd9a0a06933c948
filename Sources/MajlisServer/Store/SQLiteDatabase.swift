import CSQLite
import Foundation

/// A thin, synchronous handle on one SQLite database file.
///
/// Not thread-safe by itself: `Store` serializes every use behind its lock.
final class SQLiteDatabase: SQLDatabase {
    typealias Failure = SQLFailure
    typealias Value = SQLValue

    let dialect = SQLDialect.sqlite

    private var handle: OpaquePointer?
    private var statements: [String: OpaquePointer] = [:]
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    init(path: String, readOnly: Bool = false) throws {
        let flags = (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) | SQLITE_OPEN_NOMUTEX
        // A new store is the server's alone (chat, bans, who sat where): made readable by its
        // owner only; SQLite gives its journal files the same mode.
        if !readOnly, !FileManager.default.fileExists(atPath: path) {
            _ = FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600])
        }
        guard sqlite3_open_v2(path, &handle, flags, nil) == SQLITE_OK else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close(handle)
            handle = nil  // closed here: the deinit, which runs too, must not close it again
            throw Failure(description: "cannot open \(path): \(message)")
        }
        sqlite3_busy_timeout(handle, 5000)
    }

    deinit {
        for statement in statements.values { sqlite3_finalize(statement) }
        sqlite3_close(handle)
    }

    private var lastError: String { String(cString: sqlite3_errmsg(handle)) }

    func execute(_ sql: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        if sqlite3_exec(handle, sql, nil, nil, &message) != SQLITE_OK {
            let text = message.map { String(cString: $0) } ?? lastError
            sqlite3_free(message)
            throw Failure(description: text)
        }
    }

    private func prepared(_ sql: String) throws -> OpaquePointer {
        if let statement = statements[sql] {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
            return statement
        }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
            throw Failure(description: "\(lastError) in: \(sql)")
        }
        statements[sql] = statement
        return statement
    }

    private func bind(_ values: [Value], to statement: OpaquePointer) {
        for (offset, value) in values.enumerated() {
            let position = Int32(offset + 1)
            switch value {
            case .null: sqlite3_bind_null(statement, position)
            case .int(let number): sqlite3_bind_int64(statement, position, number)
            case .text(let text): sqlite3_bind_text(statement, position, text, -1, Self.transient)
            case .bytes(let bytes): bytes.withUnsafeBytes { _ = sqlite3_bind_blob(statement, position, $0.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32($0.count), Self.transient) }
            }
        }
    }

    @discardableResult
    func run(_ sql: String, _ values: [Value]) throws -> Int {
        let statement = try prepared(sql)
        bind(values, to: statement)
        defer { sqlite3_reset(statement) }
        let result = sqlite3_step(statement)
        guard result == SQLITE_DONE || result == SQLITE_ROW else { throw Failure(description: "\(lastError) in: \(sql)") }
        return Int(sqlite3_changes(handle))
    }

    func query(_ sql: String, _ values: [Value]) throws -> [[Value]] {
        let statement = try prepared(sql)
        bind(values, to: statement)
        defer { sqlite3_reset(statement) }
        var rows: [[Value]] = []
        while true {
            let result = sqlite3_step(statement)
            if result == SQLITE_DONE { break }
            guard result == SQLITE_ROW else { throw Failure(description: "\(lastError) in: \(sql)") }
            let columns = sqlite3_column_count(statement)
            rows.append((0..<columns).map { column in
                switch sqlite3_column_type(statement, column) {
                case SQLITE_NULL: return .null
                case SQLITE_INTEGER: return .int(sqlite3_column_int64(statement, column))
                case SQLITE_BLOB:
                    let count = Int(sqlite3_column_bytes(statement, column))
                    guard count > 0, let bytes = sqlite3_column_blob(statement, column) else { return .bytes([]) }
                    return .bytes(Array(UnsafeRawBufferPointer(start: bytes, count: count)))
                default:
                    guard let text = sqlite3_column_text(statement, column) else { return .null }
                    return .text(String(cString: text))
                }
            })
        }
        return rows
    }

    func transaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }
}
