import MajlisProtocol

extension RoomEngine {
    /// Moves the room's clock to `now`: expires invites, requests, chat mutes and bans, and
    /// removes members whose resume grace ran out.
    public mutating func tick(now: Int64) -> RoomOutcome {
        var out = RoomOutcome()
        let seated = occupancy
        invites = invites.filter { $0.value.expiresAt > now }
        for id in requestOrder {
            guard let request = requests[id], request.createdAt + limits.requestLifetime <= now else { continue }
            endRequest(request, reason: "expired", out: &out)
        }
        for (user, until) in chatMutes where until <= now {
            chatMutes[user] = nil
            if let record = members[user] {
                emit(.user(user), .youChatMuted(until: nil), &out)
                emit(.room, .memberUpdated(member(record, now: now)), &out)
            }
        }
        if bans.contains(where: { $0.value <= now }) {
            bans = bans.filter { $0.value > now }
            knownNames = knownNames.filter { $0.key == owner || bans[$0.key] != nil }
        }
        let expired = away.filter { $0.value + limits.resumeGrace <= now }
        if !expired.isEmpty {
            for user in joinOrder where expired[user] != nil {
                removeMember(user, reason: "timeout", kicked: false, now: now, out: &out)
            }
        }
        flushMembersIfDue(now: now, out: &out)
        saveSeats(ifChangedFrom: seated, &out)
        return out
    }

    /// The earliest time at which `tick` would change something, if any.
    public var nextDeadline: Int64? {
        var times: [Int64] = invites.values.map(\.expiresAt)
        times += requests.values.map { $0.createdAt + limits.requestLifetime }
        times += chatMutes.values
        if let earliest = away.values.min() { times.append(earliest + limits.resumeGrace) }
        if !pendingJoined.isEmpty || !pendingLeft.isEmpty { times.append(lastMembersFlush + limits.membersChangedInterval) }
        return times.min()
    }
}
