import Foundation

/// Log levels, most verbose first.
public enum LogLevel: Int, Sendable, Comparable, CaseIterable {
    case trace, debug, info, warning, error

    public init?(name: String) {
        guard let level = Self.allCases.first(where: { "\($0)" == name }) else { return nil }
        self = level
    }

    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// A small logger shaped like swift-log's: messages are autoclosures, so a disabled level costs
/// nothing. Writes one line per message to standard error. Never give it tokens or secrets.
public struct Logger: Sendable {
    public var label: String
    public var level: LogLevel

    public init(label: String, level: LogLevel = .info) {
        self.label = label
        self.level = level
    }

    public func log(_ level: LogLevel, _ message: @autoclosure () -> String) {
        guard level >= self.level else { return }
        let line = "\(Date().formatted(.iso8601)) \(level) [\(label)] \(message())\n"
        FileHandle.standardError.write(Data(line.utf8))
    }

    public func trace(_ message: @autoclosure () -> String) { log(.trace, message()) }
    public func debug(_ message: @autoclosure () -> String) { log(.debug, message()) }
    public func info(_ message: @autoclosure () -> String) { log(.info, message()) }
    public func warning(_ message: @autoclosure () -> String) { log(.warning, message()) }
    public func error(_ message: @autoclosure () -> String) { log(.error, message()) }
}
