import Foundation

/// The one logging front of the server, the SDK and the tools, shaped like swift-log: a value
/// with a label and a level over a handler that may be replaced (an app sends the SDK's lines to
/// its own logging). Messages are autoclosures, so a disabled level costs nothing, and every
/// message passes through `Redaction` first, so access tokens and secrets never reach a log.
/// Events worth finding later (rejected logins and joins, kicks, bans, store errors) carry an
/// event name and fields, which JSON lines keep as keys.
public struct Logger: Sendable {
    /// One message as a handler gets it (already redacted).
    public struct Record: Sendable {
        public var time: Date
        public var level: LogLevel
        public var label: String
        public var message: String
        public var event: String?
        public var fields: [String: String]

        public init(time: Date, level: LogLevel, label: String, message: String, event: String? = nil, fields: [String: String] = [:]) {
            self.time = time
            self.level = level
            self.label = label
            self.message = message
            self.event = event
            self.fields = fields
        }
    }

    /// Where records go. Called on the logging thread; must be thread-safe.
    public typealias Handler = @Sendable (Record) -> Void

    public var label: String
    public var level: LogLevel
    public var handler: Handler

    /// A logger handing every record at `level` or worse to `handler`.
    public init(label: String, level: LogLevel = .info, handler: @escaping Handler) {
        self.label = label
        self.level = level
        self.handler = handler
    }

    /// A logger writing one line per record, as `format`, to standard error (or to `sink`).
    public init(label: String, level: LogLevel = .info, format: LogFormat = .text, sink: (@Sendable (String) -> Void)? = nil) {
        let write = sink ?? { FileHandle.standardError.write(Data($0.utf8)) }
        self.init(label: label, level: level) { write(Self.line($0, format: format)) }
    }

    /// A logger that drops everything.
    public static let silent = Logger(label: "silent", level: .error) { _ in }

    public func log(_ level: LogLevel, _ message: @autoclosure () -> String, event: String? = nil, fields: [String: String] = [:]) {
        guard level >= self.level else { return }
        handler(Record(time: Date(), level: level, label: label, message: Redaction.redact(message()), event: event, fields: fields.mapValues(Redaction.redact)))
    }

    public func trace(_ message: @autoclosure () -> String) { log(.trace, message()) }
    public func debug(_ message: @autoclosure () -> String) { log(.debug, message()) }
    public func info(_ message: @autoclosure () -> String) { log(.info, message()) }
    public func warning(_ message: @autoclosure () -> String) { log(.warning, message()) }
    public func error(_ message: @autoclosure () -> String) { log(.error, message()) }

    /// `record` as one line (ending in a newline): text for people, or a JSON object.
    public static func line(_ record: Record, format: LogFormat) -> String {
        let time = record.time.formatted(.iso8601)
        switch format {
        case .text:
            let details = record.fields.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            return "\(time) \(record.level) [\(record.label)] \(record.message)\(details.isEmpty ? "" : " (\(details))")\n"
        case .json:
            var object = record.fields
            object["time"] = time
            object["level"] = "\(record.level)"
            object["label"] = record.label
            object["message"] = record.message
            if let event = record.event { object["event"] = event }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            return String(decoding: (try? encoder.encode(object)) ?? Data(), as: UTF8.self) + "\n"
        }
    }
}
