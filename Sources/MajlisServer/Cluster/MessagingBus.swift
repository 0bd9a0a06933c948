import Foundation
import MajlisProtocol
import Synchronization

/// Carries messaging events between the nodes of a cluster, so that a message reaches its
/// recipients whichever node they are connected to. A node writes each event it sends its own
/// sessions to one Redis stream, sealed with the cluster's secret (`ClusterSeal`: nodes trust
/// only each other), and reads what the other nodes write there on a thread of its own, from
/// where it last read: an event written while a node's read was being made again is read all the
/// same. The stream keeps about its last 10,000 events. Orders to end a user's sessions
/// (`SessionEnding`) travel the same way.
///
/// Events are written by a queue of their own, in order: the messaging ops never wait for Redis.
/// While Redis cannot be reached they wait in a backlog (the newest `kept`) and are written when
/// it answers again, so the recipients on other nodes have them live after an outage too; a
/// reader cut off reads again from where it stopped (from a second before its outage when it had
/// read nothing yet). What the bus carries is still only the live copy: every message is in the
/// shared store before any event of it is sent, so a device that missed one (its node
/// restarting) has it by `msg.sync`.
final class MessagingBus: Sendable {
    static let stream = "majlis:messaging"
    /// Events the stream keeps (about: Redis trims whole blocks).
    static let kept = 10_000
    /// How long one read waits for events (ms): under the Redis client's 2 s command timeout,
    /// and the longest `stop` waits for the reader.
    static let wait = 1_000

    /// An event as it travels between nodes.
    private struct Entry: Codable {
        var node: String
        var users: [String]
        var frame: String
        /// An order to end sessions instead of a frame to send.
        var ending: SessionEnding?
    }

    private let writer: RedisClient
    /// A connection of its own: a read blocks it for up to `wait`.
    private let reader: RedisClient
    private let seal: ClusterSeal
    private let node: String
    private let logger: Logger
    /// Sends `frame` to this node's sessions of `users`.
    private let deliver: @Sendable (_ users: [String], _ frame: Data) -> Void
    /// Ends a user's sessions on this node.
    private let end: @Sendable (SessionEnding) -> Void
    private let running = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    /// Sealed events not written yet, oldest first, and whether a write is under way (or waits
    /// to try again).
    private let backlog = Mutex<(events: [String], writing: Bool, failing: Bool)>(([], false, false))
    private let writes = DispatchQueue(label: "majlis.bus.write")
    /// How long (ms) the writer waits before trying Redis again.
    static let retryAfter = 250

    init(
        writer: RedisClient, reader: RedisClient, seal: ClusterSeal, node: String, logger: Logger,
        deliver: @escaping @Sendable (_ users: [String], _ frame: Data) -> Void, end: @escaping @Sendable (SessionEnding) -> Void
    ) {
        self.writer = writer
        self.reader = reader
        self.seal = seal
        self.node = node
        self.logger = logger
        self.deliver = deliver
        self.end = end
    }

    /// Hands `frame` to the other nodes, for their sessions of `users`: queued at once, written
    /// in order by the bus's own queue.
    func publish(users: [String], frame: Data) {
        publish(Entry(node: node, users: users, frame: String(decoding: frame, as: UTF8.self)))
    }

    /// Hands `ending` to the other nodes, to end the user's sessions there. It carries its
    /// `session.ended` frame too: a node of an older version, which knows no endings, at least
    /// tells the user's sessions.
    func publish(_ ending: SessionEnding) {
        publish(Entry(node: node, users: [ending.user], frame: String(decoding: ending.frame, as: UTF8.self), ending: ending))
    }

    private func publish(_ entry: Entry) {
        guard let json = try? JSONEncoder().encode(entry) else { return }
        let sealed = seal.seal(String(decoding: json, as: UTF8.self))
        let start = backlog.withLock { backlog -> Bool in
            backlog.events.append(sealed)
            if backlog.events.count > Self.kept { backlog.events.removeFirst(backlog.events.count - Self.kept) }
            guard !backlog.writing else { return false }
            backlog.writing = true
            return true
        }
        if start { writes.async { [self] in write() } }
    }

    /// Writes the backlog, oldest first; on a failure, tries again `retryAfter` ms later.
    private func write() {
        while let next = backlog.withLock({ $0.events.first }) {
            do {
                try writer.command(["XADD", Self.stream, "MAXLEN", "~", String(Self.kept), "*", "e", next])
            } catch {
                if !backlog.withLock({ $0.failing }) {
                    logger.log(.warning, "messaging events wait for Redis to reach the other nodes: \(error)", event: "messaging.bus", fields: ["error": "\(error)"])
                }
                backlog.withLock { $0.failing = true }
                // A bus stopped (its node stops) tries no more: the store has every message.
                guard running.load(ordering: .relaxed) else {
                    backlog.withLock { $0 = ([], false, false) }
                    return
                }
                writes.asyncAfter(deadline: .now() + .milliseconds(Self.retryAfter)) { [self] in write() }
                return
            }
            let recovered = backlog.withLock { backlog -> Bool in
                if backlog.events.first == next { backlog.events.removeFirst() }
                defer { backlog.failing = false }
                return backlog.failing
            }
            if recovered { logger.log(.info, "messaging events reach the other nodes again", event: "messaging.bus") }
        }
        let more = backlog.withLock { backlog -> Bool in
            if backlog.events.isEmpty { backlog.writing = false }
            return !backlog.events.isEmpty
        }
        if more { writes.async { [self] in write() } }
    }

    /// Starts reading the other nodes' events (those written from now on).
    func start() {
        guard !running.exchange(true, ordering: .sequentiallyConsistent) else { return }
        let thread = Thread { [self] in
            read()
            finished.signal()
        }
        thread.name = "majlis-bus"
        thread.start()
    }

    /// Stops reading (within one read's wait).
    func stop() {
        guard running.exchange(false, ordering: .sequentiallyConsistent) else { return }
        finished.wait()
        reader.close()
    }

    private func read() {
        var last = "$"
        var failing = false
        while running.load(ordering: .relaxed) {
            let reply: RedisClient.Reply
            do {
                reply = try reader.command(["XREAD", "COUNT", "512", "BLOCK", String(Self.wait), "STREAMS", Self.stream, last])
                if failing {
                    failing = false
                    logger.log(.info, "messaging events from other nodes flow again", event: "messaging.bus")
                }
            } catch {
                if !failing {
                    failing = true
                    logger.log(.warning, "messaging events from other nodes cannot be read: \(error)", event: "messaging.bus", fields: ["error": "\(error)"])
                    // Nothing read yet: read again from a second before the outage (stream ids
                    // are Redis's clock in ms), not from whatever is newest when it is back.
                    if last == "$" { last = "\(SystemClock().now() - 1_000)-0" }
                }
                Thread.sleep(forTimeInterval: 0.2)
                continue
            }
            for (id, sealed) in Self.entries(reply) {
                last = id
                guard let text = seal.open(sealed), let entry = try? JSONDecoder().decode(Entry.self, from: Data(text.utf8)), entry.node != node else { continue }
                if let ending = entry.ending { end(ending) } else { deliver(entry.users, Data(entry.frame.utf8)) }
            }
        }
    }

    /// The ids and sealed events of an `XREAD` reply (nil on a timeout): `[[stream, [[id, [field, value]], ...]]]`.
    static func entries(_ reply: RedisClient.Reply) -> [(id: String, sealed: String)] {
        guard case .array(let streams) = reply else { return [] }
        var found: [(String, String)] = []
        for case .array(let stream) in streams where stream.count == 2 {
            guard case .array(let items) = stream[1] else { continue }
            for case .array(let item) in items where item.count == 2 {
                guard let id = item[0].text, case .array(let fields) = item[1], fields.count >= 2, let value = fields[1].text else { continue }
                found.append((id, value))
            }
        }
        return found
    }
}
