import Foundation
import MajlisForwarding
import MajlisProtocol
import MajlisRoom
import MajlisTransport

/// What reaches the members after a change (on the room's queue): speaking rights, the events
/// in order, presence and media of members who left, kicked connections closed, metrics and logs.
extension RoomHost {
    /// Sends an ephemeral event (no seq) to every member.
    func broadcast(_ event: ServerEvent) {
        queue.async { [self] in
            guard !ended else { return }
            let frame = WireEncoder.event(EventFrame(room: id, seq: nil, event: event))
            WebSocketConnection.send(frame, to: roomConnections(), urgent: false)
        }
    }

    /// Tells each member how well its network carries audio (`network.quality`), and the whole
    /// room how a seated member's does. A listener's quality matters to the listener alone:
    /// sent to everyone, a room's reports would grow with the square of its size (2,000 members
    /// with voice: two million writes a second).
    func reportQuality(_ qualities: [MemberQuality]) {
        queue.async { [self] in
            guard !ended else { return }
            let seated = Set(engine.seats.compactMap(\.user))
            for quality in qualities where engine.isMember(quality.user) {
                let event = ServerEvent.networkQuality(user: quality.user, up: quality.up, down: quality.down)
                let connections = seated.contains(quality.user) ? roomConnections() : context.presence.connections(of: [quality.user], in: id)
                WebSocketConnection.send(WireEncoder.event(EventFrame(room: id, seq: nil, event: event)), to: connections, urgent: false)
            }
        }
    }

    /// Tells the media router who may be heard now.
    func applySpeakingRights() {
        var seats: [String: Int] = [:]
        for seat in engine.seats {
            if let user = seat.user, engine.mayPublish(user) { seats[user] = seat.index }
        }
        context.media.setSpeakers(room: id, seats: seats)
    }

    /// Sends the events, then updates presence (and closes kicked connections) and deadlines.
    func finish(_ outcome: RoomOutcome, since: UInt64? = nil) {
        // Speaking rights change before anyone hears of the change that caused it.
        applySpeakingRights()
        let removed = outcome.effects.compactMap { effect -> String? in
            if case .memberRemoved(let user, _, _) = effect { return user }
            return nil
        }
        for delivery in outcome.deliveries {
            let connections: [WebSocketConnection]
            if case .room = delivery.audience, removed.isEmpty {
                connections = roomConnections()
            } else {
                let users = recipients(delivery.audience, alsoRemoved: removed)
                guard !users.isEmpty else { continue }
                connections = context.presence.connections(of: users, in: id)
            }
            guard !connections.isEmpty else { continue }
            var event = delivery.event
            if case .seatUpdated(let seats) = event { event = .seatUpdated(replies.withSSRCs(seats)) }
            let frame = WireEncoder.event(EventFrame(room: id, seq: delivery.seq, event: event))
            WebSocketConnection.send(frame, to: connections, urgent: false, since: since)
        }
        for delivery in outcome.deliveries {
            if case .youKicked(let by, let until) = delivery.event, case .user(let user) = delivery.audience {
                var fields = ["room": id, "user": user, "by": by]
                if let until { fields["until"] = String(until) }
                context.logger.log(
                    .info, "room \(id): \(user) removed by \(by)" + (until.map { ", banned until \($0)" } ?? ""),
                    event: until == nil ? "member.kicked" : "member.banned", fields: fields)
            }
        }
        for effect in outcome.effects {
            switch effect {
            case .storeChat: context.metrics.count(.chatMessages)
            case .saveBan(_, let until) where until > 0: context.metrics.count(.bans)
            case .memberRemoved(_, true, _): context.metrics.count(.kicks)
            default: break
            }
        }
        for effect in outcome.effects {
            switch effect {
            case .memberRemoved(let user, let kicked, _):
                context.media.leave(room: id, user: user)
                let (session, remaining) = context.presence.left(user, room: id)
                if kicked, remaining == 0, let session {
                    session.connection.close(code: CloseCode.kicked.rawValue, reason: "kicked from room \(id)")
                }
            case .deleteRoom:
                ended = true
                context.rooms.remove(id, host: self)
                context.leases?.release(id)
            default:
                break
            }
        }
        updateDeadline()
    }

    /// The connections of every member: the list made for the last broadcast while no one has
    /// joined, left or changed connection since (a broadcast to thousands then looks up no one).
    func roomConnections() -> [WebSocketConnection] {
        let members = engine.memberIds
        let cached = audience.flatMap { $0.members == members ? $0 : nil }
        let (found, generation) = context.presence.connections(of: members, in: id, unlessStillAt: cached?.generation)
        if let found {
            audience = (members, generation, found)
            return found
        }
        return cached!.connections
    }

    func recipients(_ audience: Audience, alsoRemoved removed: [String]) -> [String] {
        switch audience {
        case .room: return engine.memberIds + removed
        case .roomExcept(let user): return (engine.memberIds + removed).filter { $0 != user }
        case .user(let user): return [user]
        case .users(let users): return users
        case .moderators: return engine.moderatorIds
        }
    }
}
