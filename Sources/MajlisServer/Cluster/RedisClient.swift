import CRedis
import Foundation
import MajlisProtocol
import MajlisTransport

/// A connection to Redis (`redis://[:PASSWORD@]HOST[:PORT][/DB]`) through hiredis: one blocking
/// command at a time under a lock, each bounded by a timeout. A failed connection is dropped and
/// made again by the next command, so an outage costs the commands made during it and nothing
/// after.
public final class RedisClient: @unchecked Sendable {
    // Audited: `context` is used under `lock` only.

    /// What a command answered.
    public enum Reply: Sendable, Equatable {
        case string(String)
        case integer(Int64)
        case array([Reply])
        case status(String)
        case null

        /// The text of a string or status reply.
        public var text: String? {
            switch self {
            case .string(let text), .status(let text): text
            default: nil
            }
        }
    }

    /// A command that could not be carried out: Redis unreachable, or its error answer.
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public let description: String
        /// Whether Redis answered with an error (the connection is fine).
        public let answered: Bool
    }

    public let host: String
    public let port: Int
    private let password: String?
    private let database: Int?
    private let timeout: timeval
    private let lock = NSLock()
    private var context: UnsafeMutablePointer<redisContext>?
    /// Whether the last command could not reach Redis.
    private var troubled = false
    private var recovered: Int64?

    /// When (monotonic ms) Redis was reached again after a command could not reach it (an
    /// outage, a restart, a pause); nil if that never happened. What Redis kept with a lifetime
    /// may have lapsed meanwhile, or all of it been lost (`RoomLeases` waits before taking rooms).
    public var recoveredAt: Int64? { lock.withLock { recovered } }

    /// `timeout`: seconds a connection or a command may take.
    public init(url: String, timeout: Double = 2) throws {
        guard let parts = URLComponents(string: url), parts.scheme == "redis", let host = parts.host, !host.isEmpty else {
            throw Failure(description: "\(url) is not a Redis URL (redis://[:PASSWORD@]HOST[:PORT][/DB])", answered: false)
        }
        self.host = host
        port = parts.port ?? 6379
        password = parts.password?.removingPercentEncoding
        let path = parts.path.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        if path.isEmpty {
            database = nil
        } else if let number = Int(path), number >= 0 {
            database = number
        } else {
            throw Failure(description: "\(url): the database must be a number (redis://HOST:PORT/0)", answered: false)
        }
        let whole = Int(timeout)
        self.timeout = timeval(tv_sec: whole, tv_usec: Int((timeout - Double(whole)) * 1_000_000))
    }

    deinit {
        if let context { redisFree(context) }
    }

    /// Runs one command (`["SET", key, value, "PX", "5000"]`).
    @discardableResult
    public func command(_ arguments: [String]) throws(Failure) -> Reply {
        lock.lock()
        defer { lock.unlock() }
        do {
            let reply = try Self.run(arguments, on: try connected())
            if troubled {
                troubled = false
                recovered = MonotonicClock.wholeMilliseconds()
            }
            return reply
        } catch {
            if !error.answered {
                disconnect()
                troubled = true
            }
            throw error
        }
    }

    /// Drops the connection (the next command makes a new one).
    public func close() {
        lock.withLock { disconnect() }
    }

    private func disconnect() {
        if let context { redisFree(context) }
        context = nil
    }

    private func connected() throws(Failure) -> UnsafeMutablePointer<redisContext> {
        if let context { return context }
        guard let made = redisConnectWithTimeout(host, Int32(port), timeout) else {
            throw Failure(description: "cannot reach Redis at \(host):\(port)", answered: false)
        }
        guard made.pointee.err == 0 else {
            let reason = Self.errorText(made)
            redisFree(made)
            throw Failure(description: "cannot reach Redis at \(host):\(port): \(reason)", answered: false)
        }
        redisSetTimeout(made, timeout)
        do {
            if let password { _ = try Self.run(["AUTH", password], on: made) }
            if let database { _ = try Self.run(["SELECT", String(database)], on: made) }
        } catch {
            redisFree(made)
            throw error
        }
        context = made
        return made
    }

    private static func errorText(_ context: UnsafeMutablePointer<redisContext>) -> String {
        withUnsafeBytes(of: context.pointee.errstr) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
    }

    private static func run(_ arguments: [String], on context: UnsafeMutablePointer<redisContext>) throws(Failure) -> Reply {
        let bytes = arguments.map { Array($0.utf8) }
        let raw: UnsafeMutableRawPointer? = withByteArrays(bytes) { pointers, lengths in
            redisCommandArgv(context, Int32(arguments.count), pointers, lengths)
        }
        guard let raw else {
            throw Failure(description: "Redis: \(errorText(context))", answered: false)
        }
        let reply = raw.assumingMemoryBound(to: redisReply.self)
        defer { freeReplyObject(raw) }
        if reply.pointee.type == REDIS_REPLY_ERROR {
            throw Failure(description: "Redis refused \(arguments.first ?? ""): \(text(reply))", answered: true)
        }
        return convert(reply)
    }

    /// Calls `body` with C pointers to each array's bytes and their lengths.
    private static func withByteArrays<R>(_ arrays: [[UInt8]], _ body: (UnsafeMutablePointer<UnsafePointer<CChar>?>, UnsafePointer<Int>) -> R) -> R {
        let storage = arrays.map { array -> UnsafeMutablePointer<CChar> in
            let copy = UnsafeMutablePointer<CChar>.allocate(capacity: max(1, array.count))
            array.withUnsafeBytes { raw in
                if let base = raw.baseAddress { UnsafeMutableRawPointer(copy).copyMemory(from: base, byteCount: array.count) }
            }
            return copy
        }
        defer { for pointer in storage { pointer.deallocate() } }
        var pointers = storage.map { UnsafePointer<CChar>?(UnsafePointer($0)) }
        let lengths = arrays.map(\.count)
        return pointers.withUnsafeMutableBufferPointer { pointers in
            lengths.withUnsafeBufferPointer { lengths in body(pointers.baseAddress!, lengths.baseAddress!) }
        }
    }

    private static func text(_ reply: UnsafeMutablePointer<redisReply>) -> String {
        guard let str = reply.pointee.str else { return "" }
        return String(decoding: UnsafeRawBufferPointer(start: str, count: Int(reply.pointee.len)), as: UTF8.self)
    }

    private static func convert(_ reply: UnsafeMutablePointer<redisReply>) -> Reply {
        switch reply.pointee.type {
        case REDIS_REPLY_STRING: return .string(text(reply))
        case REDIS_REPLY_STATUS: return .status(text(reply))
        case REDIS_REPLY_INTEGER: return .integer(reply.pointee.integer)
        case REDIS_REPLY_ARRAY:
            let count = Int(reply.pointee.elements)
            return .array((0..<count).compactMap { index in reply.pointee.element[index].map(convert) })
        default: return .null
        }
    }
}
