import MajlisProtocol

/// Where a decoded request goes: `RequestRouter`'s decision, carried out by `SignalingServer`
/// with the handler each case names. A new kind of request is a new case here; the compiler
/// then names the router's and the server's switches that must take it.
enum Route: Sendable, Equatable {
    /// `hello` on a connection that has not said it yet (`SessionRequests`).
    case hello(HelloArgs)
    /// An op on the session itself (`SessionRequests`).
    case session(SessionOp)
    /// A pre-call test (`PrecallRequests`).
    case precall(PrecallOp)
    /// A room op carried out on this node: on the room's host, loaded, created or placed as
    /// `RoomRoute` says (`RoomRequests`).
    case room(RoomRoute)
    /// A messaging op (`MessagingRequests`).
    case messaging(MessagingCommand)
    /// A room op for a room another node hosts: sent over the session's link to `node`
    /// (`RoomRequests`). Should the link have closed meanwhile, the op is carried out as `.room`.
    case relay(RoomRoute, node: String)
    /// Answered with the error; the connection stays open.
    case refuse(ProtocolError)
    /// Answered with the error, then the connection is closed with 4001 (`unauthorized`).
    case reject(ProtocolError)
}

/// The ops on a session itself (docs/protocol.md section 4).
enum SessionOp: Sendable, Equatable {
    case ping
    case renew(token: String)
    case bye
}

/// The pre-call tests (docs/protocol.md section 15). An echo test's offer is read by its
/// handler (its rate was taken by the router).
enum PrecallOp: Sendable, Equatable {
    case echoStart(delay: Int, sdp: String?)
    case echoStop
    case probeStart(up: Int, down: Int)
    case probeResult
    case probeStop
}

/// A room op as the room's host takes it.
struct RoomRoute: Sendable, Equatable {
    var room: String
    /// The command as the host carries it out: `room.create` becomes a join of the room it creates.
    var command: RoomCommand
    /// How the op may create the room when it does not exist (`room.create`, `room.join` with `create`).
    var creation: RoomRegistry.Creation?
    /// A member's `room.create` or `room.join`: a room open nowhere may be placed on another node.
    var placing: Bool
}
