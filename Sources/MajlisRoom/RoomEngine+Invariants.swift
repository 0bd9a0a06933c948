import MajlisProtocol

extension RoomEngine {
    /// Every broken invariant, described; empty when the room is consistent.
    public func invariantViolations() -> [String] {
        var problems: [String] = []
        var seated = Set<String>()
        for (position, seat) in seats.enumerated() {
            if seat.index != position { problems.append("seat \(position) has index \(seat.index)") }
            switch seat.state {
            case .occupied:
                guard let user = seat.user else {
                    problems.append("seat \(position) is occupied by no one")
                    continue
                }
                if !seated.insert(user).inserted { problems.append("\(user) holds two seats") }
                if members[user] == nil { problems.append("\(user) is seated but not a member") }
            case .locked, .empty:
                if seat.user != nil { problems.append("seat \(position) is \(seat.state) but has a user") }
                if seat.state == .empty && seat.micOn { problems.append("empty seat \(position) has its mic on") }
            }
        }
        if Set(joinOrder) != Set(members.keys) || joinOrder.count != members.count {
            problems.append("join order and members disagree")
        }
        for (key, holder) in nameHolders where members[holder].map({ DisplayName.comparisonKey($0.name) }) != key {
            problems.append("name \(key) is held by \(holder), who is not a member by that name")
        }
        var requesters = Set<String>()
        if Set(requestOrder) != Set(requests.keys) { problems.append("request order and requests disagree") }
        for request in requests.values {
            if members[request.user] == nil { problems.append("request \(request.id) of non-member \(request.user)") }
            if seated.contains(request.user) { problems.append("request \(request.id) of seated \(request.user)") }
            if !requesters.insert(request.user).inserted { problems.append("\(request.user) has two requests") }
        }
        if away.keys.contains(where: { members[$0] == nil }) { problems.append("a non-member is away") }
        if pendingJoined.contains(where: { members[$0] == nil }) { problems.append("a pending join of a non-member") }
        if pendingLeft.contains(where: { members[$0] != nil }) { problems.append("a pending leave of a member") }
        if attributes.count > limits.attributeKeys { problems.append("too many attributes") }
        if admins.contains(owner) { problems.append("the owner is listed as an admin") }
        if serverAdmins != Set(members.values.filter(\.grants.admin).map(\.id)) {
            problems.append("the server admins are not the members with the admin grant")
        }
        if zip(joinOrder, joinOrder.dropFirst()).contains(where: { (members[$0]?.joinIndex ?? 0) >= (members[$1]?.joinIndex ?? 0) }) {
            problems.append("join indexes do not rise along the join order")
        }
        if snapshot(for: owner, now: 0).members.map(\.id) != listedByWalkingEveryone() {
            problems.append("a snapshot lists other members than a walk over every member does")
        }
        return problems
    }

    /// Who a snapshot lists, found the slow way: owner, admins, then the seated and server
    /// admins, each group in join order, then the first others.
    private func listedByWalkingEveryone() -> [String] {
        let seated = Set(seats.compactMap(\.user))
        var groups: [[String]] = [[], [], []]
        var others: [String] = []
        for id in joinOrder {
            guard let record = members[id] else { continue }
            if id == owner {
                groups[0].append(id)
            } else if admins.contains(id) {
                groups[1].append(id)
            } else if seated.contains(id) || record.grants.admin {
                groups[2].append(id)
            } else if others.count < limits.snapshotOtherMembers {
                others.append(id)
            }
        }
        return groups.flatMap { $0 } + others
    }
}
