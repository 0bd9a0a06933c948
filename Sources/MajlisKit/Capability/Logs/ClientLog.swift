import Foundation
import MajlisProtocol
import Synchronization

/// The client's own log, for when the app's support asks for it (`log.requested`, answered by
/// `LogResponder`): the newest lines, at most `capacity` bytes of them, oldest dropped first.
/// Every line has passed `Logger`'s redaction, so no access token or secret is kept.
///
/// With a `file`, the lines are kept there too, across runs: a request made while the app was
/// closed is answered with what its last run logged, and a run that ended without `close()`
/// (a crash, a kill) is told at the next start (`previousRunEnded`), so the app can offer its log.
/// One process a file. Thread-safe.
public final class ClientLog: Sendable {
    /// One kept line: when (Unix ms) and the line as `Logger.line` writes it.
    struct Entry: Sendable {
        var at: Int64
        var line: String
    }

    /// The kept lines, their bytes, and the file's state.
    struct Lines: Sendable {
        var lines: [Entry] = []
        var bytes = 0
        /// How many of `lines` this run logged (the last ones).
        var ofThisRun = 0
        /// Bytes in the file, and the file.
        var written = 0
        var handle: FileHandle?

        mutating func append(_ entry: Entry, capacity: Int) {
            lines.append(entry)
            bytes += entry.line.utf8.count
            ofThisRun += 1
            var dropped = 0
            while bytes > capacity, dropped < lines.count {
                bytes -= lines[dropped].line.utf8.count
                dropped += 1
            }
            if dropped > 0 { lines.removeFirst(dropped) }
            ofThisRun = min(ofThisRun, lines.count)
        }

        /// Writes the file anew: the kept lines, this run's after its mark.
        mutating func rewrite() {
            guard let handle else { return }
            let earlier = lines.prefix(lines.count - ofThisRun).map(ClientLog.row).joined()
            let text = earlier + ClientLog.opened + lines.suffix(ofThisRun).map(ClientLog.row).joined()
            try? handle.truncate(atOffset: 0)
            handle.write(Data(text.utf8))
            written = text.utf8.count
        }
    }

    /// How many bytes of lines are kept by default: about a day of a room's lines at the
    /// default level.
    public static let defaultCapacity = 512 << 10
    /// The file's marks of a run's start and clean end.
    static let opened = "#opened\n"
    static let closed = "#closed\n"

    public let capacity: Int
    /// Whether the last run with this file ended by `close()`; nil without a file, or when the
    /// file is new.
    public let previousRunEnded: Bool?
    /// The lines the last run with this file logged (empty without a file).
    public let previousRun: String
    private let file: String?
    private let state = Mutex(Lines())

    public init(capacity: Int = ClientLog.defaultCapacity, file: String? = nil) {
        self.capacity = max(1, capacity)
        self.file = file
        guard let file else {
            (previousRunEnded, previousRun) = (nil, "")
            return
        }
        let text = (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
        var lines: [Entry] = []
        var lastRun: [String] = []
        var ended: Bool?
        for row in text.split(separator: "\n", omittingEmptySubsequences: true) {
            switch row + "\n" {
            case Self.opened:
                ended = false
                lastRun = []
            case Self.closed:
                ended = true
            default:
                guard let tab = row.firstIndex(of: "\t"), let at = Int64(row[..<tab]) else { continue }
                let line = String(row[row.index(after: tab)...]) + "\n"
                lines.append(Entry(at: at, line: line))
                lastRun.append(line)
            }
        }
        (previousRunEnded, previousRun) = (ended, lastRun.joined())
        let capacity = self.capacity
        state.withLock { state in
            for line in lines { state.append(line, capacity: capacity) }
            state.ofThisRun = 0
            if FileManager.default.createFile(atPath: file, contents: nil) { state.handle = FileHandle(forWritingAtPath: file) }
            state.rewrite()
        }
    }

    /// Keeps `record` (dropping the oldest lines past `capacity`).
    public func keep(_ record: Logger.Record) {
        // One line a record, in the file too: a message's own line breaks become spaces.
        let line = Logger.line(record, format: .text).dropLast().replacingOccurrences(of: "\n", with: " ") + "\n"
        let entry = Entry(at: Int64((record.time.timeIntervalSince1970 * 1_000).rounded()), line: line)
        state.withLock { state in
            state.append(entry, capacity: capacity)
            guard let handle = state.handle else { return }
            let row = Self.row(entry)
            handle.write(Data(row.utf8))
            state.written += row.utf8.count
            // The file holds at most about twice what is kept: then it is written anew.
            if state.written > 2 * capacity { state.rewrite() }
        }
    }

    /// Marks the run's clean end in the file (the next start does not take it for a crash).
    public func close() {
        state.withLock { state in
            state.handle?.write(Data(Self.closed.utf8))
            try? state.handle?.close()
            state.handle = nil
        }
    }

    /// A logger whose records this log keeps, and hands on to `next` (an app's own logging)
    /// when there is one.
    public func logger(label: String, level: LogLevel = .debug, next: Logger? = nil) -> Logger {
        Logger(label: label, level: level) { [self] record in
            keep(record)
            if let next, record.level >= next.level { next.handler(record) }
        }
    }

    /// The lines of `since`..<`until` (Unix ms; no `until`: up to now), oldest first, as one text.
    public func text(since: Int64, until: Int64? = nil) -> String {
        state.withLock { state in state.lines.filter { $0.at >= since && $0.at < (until ?? .max) }.map(\.line).joined() }
    }

    /// How many bytes of lines are kept now.
    public var bytes: Int { state.withLock { $0.bytes } }

    static func row(_ entry: Entry) -> String { "\(entry.at)\t\(entry.line)" }
}
