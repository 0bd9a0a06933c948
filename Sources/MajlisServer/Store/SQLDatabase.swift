/// A SQL database the store runs on: an SQLite file (one node) or PostgreSQL (`--postgres`).
/// Statements are written once, in the SQL both speak, with `?` for each value; the few that
/// differ (the schema, its version, upkeep) are chosen by `dialect`.
///
/// Not thread-safe by itself: `Store` serializes every use behind its lock.
protocol SQLDatabase: AnyObject {
    var dialect: SQLDialect { get }
    /// Runs one or more statements that take no values and return no rows.
    func execute(_ sql: String) throws
    /// Runs a statement that changes rows; returns how many changed.
    @discardableResult
    func run(_ sql: String, _ values: [SQLValue]) throws -> Int
    /// Runs a query; returns each row as its column values.
    func query(_ sql: String, _ values: [SQLValue]) throws -> [[SQLValue]]
    /// Runs `body` in one transaction, rolled back if it throws.
    func transaction<T>(_ body: () throws -> T) throws -> T
}

extension SQLDatabase {
    @discardableResult
    func run(_ sql: String, _ values: SQLValue...) throws -> Int { try run(sql, values) }

    func query(_ sql: String, _ values: SQLValue...) throws -> [[SQLValue]] { try query(sql, values) }
}

/// Which SQL a database speaks where the two differ.
enum SQLDialect: Sendable {
    case sqlite
    case postgres
}

/// A value to bind or read.
enum SQLValue: Equatable, Sendable {
    case null
    case int(Int64)
    case text(String)
    /// Bytes as they are (a BLOB; PostgreSQL's `bytea`).
    case bytes([UInt8])

    var int: Int64? {
        if case .int(let number) = self { return number }
        return nil
    }

    var text: String? {
        if case .text(let text) = self { return text }
        return nil
    }

    var bytes: [UInt8]? {
        if case .bytes(let bytes) = self { return bytes }
        return nil
    }
}

/// A database refused or failed a statement.
struct SQLFailure: Error, CustomStringConvertible {
    var description: String
    /// The connection was lost as a transaction committed: whether it did is not known.
    var outcomeUnknown = false
}
