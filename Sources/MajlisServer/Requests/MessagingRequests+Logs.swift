import Foundation
import MajlisProtocol
import MajlisTransport

/// Logs on request (docs/protocol.md section 20): the app's backend asks a user's client for its
/// log; the user's sessions on every node are told at once (`log.requested`), and a user with
/// none is told at their next `hello`; the client hands the log over with `log.deliver`.
extension MessagingRequests {
    /// A log request as the server API shows it.
    struct LogRequestStatus: Encodable {
        var id: String
        var user: String
        var since: Int64
        var until: Int64?
        var reason: String?
        var askedAt: Int64
        /// `asked` until the client delivers it, then `delivered`.
        var state: String
        var deliveredAt: Int64?
        /// The log's bytes, once delivered.
        var size: Int64?

        init(_ record: Store.LogRequestRecord, size: Int64?) {
            (id, user, since, until, reason, askedAt) = (
                record.request.id, record.user, record.request.since, record.request.until, record.request.reason, record.askedAt
            )
            state = record.deliveredAt == nil ? "asked" : "delivered"
            deliveredAt = record.deliveredAt
            self.size = size
        }
    }

    /// How long a request not delivered is still sent to its user's next session (ms).
    static let logRequestLifetime: Int64 = 7 * 86_400_000

    /// Asks `user`'s client for its log of `since`..<`until` (no `until`: up to when it is sent):
    /// `{request}`, and `log.requested` to the user's sessions.
    func askLog(of user: String, since: Int64, until: Int64?, reason: String?, now: Int64) throws -> Outcome {
        let id = "l" + HMACSHA256.randomBytes(12).map { String(format: "%02x", $0) }.joined()
        let request = LogRequest(id: id, since: since, until: until, reason: reason)
        try context.store.askLog(request, of: user, now: now)
        context.logger.log(.info, "log \(id) asked of \(user)", event: "log.requested", fields: ["id": id, "user": user])
        let record = Store.LogRequestRecord(request: request, user: user, askedAt: now)
        return Outcome(data: WireEncoder.encode(["request": LogRequestStatus(record, size: nil)]), events: [Delivery(users: [user], event: .logRequested(request))])
    }

    /// Log request `id` as it stands.
    func logStatus(_ id: String) throws -> Outcome {
        guard let record = try context.store.logRequest(id) else { throw ProtocolError(.requestNotFound, "no log request \(id)") }
        let size = try record.media.flatMap { try context.store.upload($0)?.length }
        return Outcome(data: WireEncoder.encode(["request": LogRequestStatus(record, size: size)]))
    }

    /// What `session`'s user was asked for and has not delivered yet, as events: sent after its
    /// `hello` is answered.
    func pendingLogRequests(of user: String, to session: Session, now: Int64) {
        queue.async { [self] in
            guard let pending = try? context.store.pendingLogRequests(of: user, since: now - Self.logRequestLifetime), !pending.isEmpty else { return }
            for request in pending {
                session.send(WireEncoder.event(EventFrame(room: nil, seq: nil, event: .logRequested(request))))
            }
        }
    }
}
