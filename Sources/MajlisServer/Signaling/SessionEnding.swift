import Foundation
import MajlisProtocol
import MajlisTransport

/// An order to end a user's sessions (all but `keep`): each gets `session.ended` with the reason,
/// then its connection is closed with `code`. Carried out on the node that gives it and, through
/// the messaging bus, on the cluster's others, so that it reaches the user's devices wherever
/// they are connected.
struct SessionEnding: Codable, Sendable, Equatable {
    var user: String
    /// The session that stays (the one that signed in, under the one-device policy).
    var keep: String?
    /// When `keep` signed in (wall-clock ms): sessions that signed in after it stay too (the
    /// order reaches another node late, and a newer sign-in's own order ends `keep`). Nil: all.
    var signedInAt: Int64?
    /// `revoked` or `elsewhere` (docs/protocol.md section 4).
    var reason: String
    var message: String?
    var code: UInt16

    /// The app's backend revoked `user`'s sessions.
    static func revoked(_ user: String, message: String) -> SessionEnding {
        SessionEnding(user: user, keep: nil, signedInAt: nil, reason: "revoked", message: message, code: CloseCode.unauthorized.rawValue)
    }

    /// `user` signed in on another device (session `keep`, at `signedInAt`), and a user has one
    /// device here.
    static func elsewhere(_ user: String, keep: String, signedInAt: Int64) -> SessionEnding {
        SessionEnding(user: user, keep: keep, signedInAt: signedInAt, reason: "elsewhere", message: nil, code: CloseCode.replaced.rawValue)
    }

    /// Whether `session` ends by this order.
    func ends(_ session: Session) -> Bool {
        guard let keep else { return true }
        guard session.sessionId != keep else { return false }
        guard let signedInAt, let greetedAt = session.greetedAt else { return true }
        return greetedAt < signedInAt
    }

    /// The `session.ended` event the user's sessions get.
    var frame: Data { WireEncoder.event(EventFrame(room: nil, seq: nil, event: .sessionEnded(reason: reason, message: message))) }

    /// Ends the user's sessions on this node; returns how many.
    @discardableResult
    func carryOut(on presence: PresenceDirectory) -> Int {
        let frame = frame
        let closing = reason == "revoked" ? "the user's sessions were revoked" : "signed in on another device"
        var ended = 0
        for session in presence.sessions(of: [user]) where ends(session) {
            session.send(frame)
            session.connection.close(code: code, reason: closing)
            ended += 1
        }
        return ended
    }
}
