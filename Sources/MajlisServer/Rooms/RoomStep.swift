import MajlisProtocol
import MajlisRoom

/// What a client's op on a room comes to, decided without I/O: the outcome, what to store and
/// in which order. `RoomHost.perform` carries it out (the commit with the lease's fence, the
/// answer, presence, media, the events, metrics and logs).
struct RoomStep: Sendable {
    var outcome: RoomOutcome
    /// What the store is to hold (nil: nothing).
    var write: RoomWrite?
    /// For an op the store must hold before it counts (`RoomCommand.mayStore`), the engine with
    /// the change, kept only once the store has it: a failed write changes nothing and is
    /// answered `internal`. Nil for other ops: the change is made in place whatever the store
    /// says, and a failed write only logged (the engine changes nothing when an op fails).
    var storeFirst: RoomEngine?
    /// A handover of the room to this user, who must not own too many rooms already (asked of
    /// the store before the change is kept).
    var handover: String?

    /// Takes `command` from `caller` on `engine` at `now`.
    init(_ command: RoomCommand, from caller: Caller, on engine: inout RoomEngine, now: Int64, webhooks: RoomWrite.Webhooks) {
        let seatsBefore = webhooks.on ? engine.seats : []
        let wasMember = engine.isMember(caller.id)
        let owner = engine.owner
        var joined: Member?
        if command.mayStore {
            var next = engine
            outcome = next.handle(command, from: caller, now: now)
            storeFirst = next
        } else {
            outcome = engine.handle(command, from: caller, now: now)
            if webhooks.on, case .join = command, !wasMember, case .success = outcome.reply { joined = engine.member(caller.id, now: now) }
        }
        var unbanned: String?
        if case .unban(let user) = command, outcome.effects.contains(.saveBan(user: user, until: 0)) { unbanned = user }
        if case .transferOwner(let receiver) = command, !caller.grants.admin, receiver != owner, case .success = outcome.reply { handover = receiver }
        write = RoomWrite(
            room: engine.id, outcome: outcome, after: storeFirst ?? engine, seatsBefore: seatsBefore, now: now, joined: joined, unbanned: unbanned,
            webhooks: webhooks)
    }
}
