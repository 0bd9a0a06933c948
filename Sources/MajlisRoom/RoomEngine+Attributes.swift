import MajlisProtocol

extension RoomEngine {
    /// `attr.set`/`attr.delete` (skip keys owned by others, list them as failed) and `attr.batch`
    /// (all or nothing: any failing key is a `conflict` and nothing changes).
    mutating func applyAttributes(
        _ caller: Caller, operations: [AttributeOperation], force: Bool, atomic: Bool, now: Int64, out: inout RoomOutcome
    ) throws(ProtocolError) -> RoomReply {
        if force && !isModerator(caller.id) && !caller.grants.admin {
            throw ProtocolError(.forbidden, "only the owner or an admin may force attributes")
        }
        var working = attributes
        var failed: [String] = []
        var setKeys = Set<String>()
        var deletedKeys = Set<String>()
        for operation in operations {
            switch operation {
            case .set(let values, let deleteOnLeave, let updateOwner):
                for (key, value) in values.sorted(by: { $0.key < $1.key }) {
                    guard !key.isEmpty, key.utf8.count <= limits.attributeKeyBytes else {
                        throw ProtocolError(.badRequest, "attribute keys must be 1 to \(limits.attributeKeyBytes) bytes")
                    }
                    guard value.utf8.count <= limits.attributeValueBytes else {
                        throw ProtocolError(.tooLarge, "attribute \(key) is larger than \(limits.attributeValueBytes) bytes")
                    }
                    if let existing = working[key] {
                        if existing.owner != caller.id && !force {
                            failed.append(key)
                            continue
                        }
                        let owner = updateOwner ? caller.id : existing.owner
                        let flag = updateOwner || existing.owner == caller.id ? deleteOnLeave : existing.deleteOnLeave
                        working[key] = AttributeRecord(value: value, owner: owner, deleteOnLeave: flag)
                    } else {
                        working[key] = AttributeRecord(value: value, owner: caller.id, deleteOnLeave: deleteOnLeave)
                    }
                    setKeys.insert(key)
                    deletedKeys.remove(key)
                }
            case .delete(let keys):
                for key in keys {
                    guard let existing = working[key] else { continue }
                    if existing.owner != caller.id && !force {
                        failed.append(key)
                        continue
                    }
                    working[key] = nil
                    setKeys.remove(key)
                    deletedKeys.insert(key)
                }
            }
        }
        if working.count > limits.attributeKeys {
            throw ProtocolError(.tooLarge, "a room holds at most \(limits.attributeKeys) attributes")
        }
        if !caller.grants.admin, !isModerator(caller.id), !setKeys.isEmpty {
            // Counted only when they grow: a member past a quota (one lowered since) may still
            // change or give up what it has.
            let mine = { (records: [String: AttributeRecord]) in records.values.count { $0.owner == caller.id } }
            if mine(working) > RoomLimits.attributeKeysPerMember && mine(working) > mine(attributes) {
                throw ProtocolError(.tooLarge, "one member may own at most \(RoomLimits.attributeKeysPerMember) attribute keys in a room")
            }
            let open = limits.attributeKeys - limits.attributeKeys / 4
            if working.count > open && working.count > attributes.count {
                throw ProtocolError(
                    .tooLarge, "the room's attributes are full for members (\(open) keys; the last \(limits.attributeKeys - open) are for the owner and admins)")
            }
        }
        if !caller.grants.admin, !setKeys.isEmpty {
            func owned(_ records: [String: AttributeRecord]) -> Int {
                records.reduce(0) { $0 + ($1.value.owner == caller.id ? $1.key.utf8.count + $1.value.value.utf8.count : 0) }
            }
            let after = owned(working)
            if after > limits.attributeBytesPerMember && after > owned(attributes) {
                throw ProtocolError(.tooLarge, "one member may own at most \(limits.attributeBytesPerMember) bytes of attributes in a room")
            }
        }
        if atomic && !failed.isEmpty {
            throw ProtocolError(.conflict, "owned by someone else: \(failed.joined(separator: ", "))")
        }
        deletedKeys = deletedKeys.filter { attributes[$0] != nil }
        let changedSets = setKeys.filter { working[$0] != attributes[$0] }
        // Kept keys are stored; one gone, or one that now vanishes with its owner, is forgotten.
        var stored: [String: AttributeValue] = [:]
        var forgotten = deletedKeys.filter { attributes[$0]?.deleteOnLeave == false }
        for key in changedSets {
            guard let record = working[key] else { continue }
            if !record.deleteOnLeave {
                stored[key] = AttributeValue(value: record.value, owner: record.owner)
            } else if attributes[key]?.deleteOnLeave == false {
                forgotten.insert(key)
            }
        }
        let changed = !changedSets.isEmpty || !deletedKeys.isEmpty
        if changed {
            // Sent to every member: charged to the caller's budget before anything changes.
            let size = changedSets.reduce(0) { $0 + $1.utf8.count + (working[$1]?.value.utf8.count ?? 0) } + deletedKeys.reduce(0) { $0 + $1.utf8.count }
            try chargeBroadcast(caller, bytes: size + Self.eventOverhead, now: now)
        }
        attributes = working
        if changed {
            var set: [String: AttributeValue] = [:]
            for key in changedSets { if let record = working[key] { set[key] = AttributeValue(value: record.value, owner: record.owner) } }
            emit(.room, .attributesUpdated(set: set, deleted: deletedKeys.sorted()), &out)
        }
        if !stored.isEmpty || !forgotten.isEmpty { out.effects.append(.saveAttributes(set: stored, deleted: forgotten.sorted())) }
        return .attributes(failed: failed)
    }
}
