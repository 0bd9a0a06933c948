import Foundation

/// The SDK's logging facade, shaped like swift-log: a value with a label and a level over a
/// handler the app may replace. Every message passes through `Redaction` first, so access
/// tokens and secrets never reach a log. Messages are autoclosures: disabled levels cost nothing.
public struct KitLogger: Sendable {
    /// How bad a message is.
    public enum Level: Int, Sendable, Comparable {
        case trace, debug, info, warning, error
        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// Where messages go. Called on the caller's thread; must be thread-safe.
    public typealias Handler = @Sendable (_ level: Level, _ label: String, _ message: String) -> Void

    public var label: String
    public var level: Level
    public var handler: Handler

    /// A logger writing to standard error.
    public init(label: String, level: Level = .info, handler: Handler? = nil) {
        self.label = label
        self.level = level
        self.handler = handler ?? { level, label, message in
            FileHandle.standardError.write(Data("\(level) [\(label)] \(message)\n".utf8))
        }
    }

    /// A logger that drops everything.
    public static let silent = KitLogger(label: "silent", level: .error, handler: { _, _, _ in })

    public func log(_ level: Level, _ message: @autoclosure () -> String) {
        guard level >= self.level else { return }
        handler(level, label, Redaction.redact(message()))
    }

    public func trace(_ message: @autoclosure () -> String) { log(.trace, message()) }
    public func debug(_ message: @autoclosure () -> String) { log(.debug, message()) }
    public func info(_ message: @autoclosure () -> String) { log(.info, message()) }
    public func warning(_ message: @autoclosure () -> String) { log(.warning, message()) }
    public func error(_ message: @autoclosure () -> String) { log(.error, message()) }
}
