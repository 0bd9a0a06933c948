import Foundation
import Synchronization

/// Log levels, most verbose first.
public enum LogLevel: Int, Sendable, Comparable, CaseIterable {
    case trace, debug, info, warning, error

    public init?(name: String) {
        guard let level = Self.allCases.first(where: { "\($0)" == name }) else { return nil }
        self = level
    }

    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// How log lines are written: for people, or one JSON object per line for log pipelines.
public enum LogFormat: String, Sendable, CaseIterable {
    case text, json
}

/// A small logger shaped like swift-log's: messages are autoclosures, so a disabled level costs
/// nothing. Writes one line per message to standard error (or to `sink`), as text or JSON lines.
/// Events worth finding later (rejected logins and joins, kicks, bans, store errors) carry an
/// event name and fields, which JSON lines keep as keys. Never give it tokens or secrets.
public struct Logger: Sendable {
    public var label: String
    public var level: LogLevel
    public var format: LogFormat
    private let sink: @Sendable (String) -> Void

    public init(label: String, level: LogLevel = .info, format: LogFormat = .text, sink: (@Sendable (String) -> Void)? = nil) {
        self.label = label
        self.level = level
        self.format = format
        self.sink = sink ?? { FileHandle.standardError.write(Data($0.utf8)) }
    }

    public func log(_ level: LogLevel, _ message: @autoclosure () -> String, event: String? = nil, fields: [String: String] = [:]) {
        guard level >= self.level else { return }
        let time = Date().formatted(.iso8601)
        switch format {
        case .text:
            let details = fields.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            sink("\(time) \(level) [\(label)] \(message())\(details.isEmpty ? "" : " (\(details))")\n")
        case .json:
            var object = fields
            object["time"] = time
            object["level"] = "\(level)"
            object["label"] = label
            object["message"] = message()
            if let event { object["event"] = event }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            sink(String(decoding: (try? encoder.encode(object)) ?? Data(), as: UTF8.self) + "\n")
        }
    }

    public func trace(_ message: @autoclosure () -> String) { log(.trace, message()) }
    public func debug(_ message: @autoclosure () -> String) { log(.debug, message()) }
    public func info(_ message: @autoclosure () -> String) { log(.info, message()) }
    public func warning(_ message: @autoclosure () -> String) { log(.warning, message()) }
    public func error(_ message: @autoclosure () -> String) { log(.error, message()) }
}
