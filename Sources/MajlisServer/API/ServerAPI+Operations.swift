import Foundation
import MajlisProtocol
import MajlisRoom
import MajlisTransport

extension APIRoute {
    /// Every operation of the API (docs/openapi.yaml describes each).
    static let all: [APIRoute] = [
        APIRoute("GET", "rooms") { try $0.listRooms($1) },
        APIRoute("POST", "rooms") { try $0.createRoom($1) },
        APIRoute("GET", "rooms/{room}") { try $0.getRoom($1) },
        APIRoute("PATCH", "rooms/{room}") { api, call in try api.run(call, op: "room.update", args: try call.body()) },
        APIRoute("DELETE", "rooms/{room}") { api, call in try api.run(call, op: "room.end", args: [:]) },
        APIRoute("POST", "rooms/{room}/mute-chat") { api, call in try api.run(call, op: "room.muteChatAll", args: try call.body()) },
        APIRoute("POST", "rooms/{room}/mute-all") { api, call in try api.run(call, op: "seat.muteAll", args: try call.body()) },
        APIRoute("POST", "rooms/{room}/emoji") { api, call in try api.run(call, op: "room.emoji", args: try call.body()) },

        APIRoute("GET", "rooms/{room}/members") { api, call in
            var args: [String: JSONValue] = [:]
            if let after = try call.queryId("after") { args["after"] = .string(after) }
            if let limit = try call.queryInt("limit", in: 1...200) { args["limit"] = .int(Int64(limit)) }
            try api.run(call, op: "member.list", args: args)
        },
        APIRoute("GET", "rooms/{room}/members/{user}") { api, call in
            let user = call.parameters["user"]
            try api.read(call) { engine, now throws(ProtocolError) in
                guard let member = engine.member(user, now: now) else { throw ProtocolError(.notInRoom, "\(user) is not in room \(engine.id)") }
                return member
            }
        },
        APIRoute("POST", "rooms/{room}/members/{user}/kick") { api, call in
            try api.run(call, op: "member.kick", args: try call.body().merging(["user": .string(call.parameters["user"])]) { $1 })
        },
        APIRoute("PUT", "rooms/{room}/members/{user}/role") { try $0.setRole($1) },
        APIRoute("POST", "rooms/{room}/members/{user}/mute-chat") { api, call in
            try api.run(call, op: "member.muteChat", args: try call.body().merging(["user": .string(call.parameters["user"])]) { $1 })
        },
        APIRoute("POST", "rooms/{room}/members/{user}/invite") { api, call in
            try api.run(call, op: "seat.invite", args: try call.body().merging(["user": .string(call.parameters["user"])]) { $1 })
        },

        APIRoute("GET", "rooms/{room}/bans") { api, call in
            struct Ban: Encodable, Sendable {
                var user: String
                /// The display name the user had when banned, if the room saw it.
                var name: String?
                var until: Int64
            }
            struct Bans: Encodable, Sendable { var bans: [Ban] }
            try api.read(call) { engine, now in
                Bans(bans: engine.activeBans(now: now).map { Ban(user: $0.user, name: engine.name(of: $0.user), until: $0.until) })
            }
        },
        APIRoute("DELETE", "rooms/{room}/bans/{user}") { api, call in
            try api.run(call, op: "member.unban", args: ["user": .string(call.parameters["user"])])
        },

        APIRoute("POST", "rooms/{room}/seats/{index}/lock") { api, call in
            try api.run(call, op: "seat.lock", args: try call.body().merging(["index": .int(Int64(try call.seatIndex()))]) { $1 })
        },
        APIRoute("POST", "rooms/{room}/seats/{index}/mute") { api, call in
            try api.run(call, op: "seat.mute", args: try call.body().merging(["index": .int(Int64(try call.seatIndex()))]) { $1 })
        },
        APIRoute("POST", "rooms/{room}/seats/{index}/kick") { api, call in
            try api.run(call, op: "seat.kick", args: ["index": .int(Int64(try call.seatIndex()))])
        },

        APIRoute("POST", "rooms/{room}/requests/{request}/accept") { api, call in
            try api.run(call, op: "request.accept", args: try call.body().merging(["requestId": .string(call.parameters["request"])]) { $1 })
        },
        APIRoute("POST", "rooms/{room}/requests/{request}/reject") { api, call in
            try api.run(call, op: "request.reject", args: ["requestId": .string(call.parameters["request"])])
        },

        APIRoute("GET", "rooms/{room}/chat") { api, call in
            var args: [String: JSONValue] = [:]
            if let before = try call.queryInt("before", in: 0...Int.max) { args["before"] = .int(Int64(before)) }
            if let limit = try call.queryInt("limit", in: 1...100) { args["limit"] = .int(Int64(limit)) }
            try api.run(call, op: "chat.history", args: args)
        },
        APIRoute("POST", "rooms/{room}/chat") { try $0.sendChat($1) },
        APIRoute("POST", "rooms/{room}/signals") { try $0.sendSignal($1) },
        APIRoute("POST", "rooms/{room}/gifts") { try $0.sendGift($1) },
        APIRoute("GET", "rooms/{room}/gifts/leaders") { api, call in
            var args: [String: JSONValue] = [:]
            for name in ["since", "until"] {
                if let value = try call.queryInt(name, in: 0...Int.max) { args[name] = .int(Int64(value)) }
            }
            if let limit = try call.queryInt("limit", in: GiftLeaders.limits) { args["limit"] = .int(Int64(limit)) }
            if let day = call.query["day"] { args["day"] = .string(day) }
            try api.run(call, op: "gift.leaders", args: args)
        },

        APIRoute("GET", "rooms/{room}/attributes") { api, call in
            struct Attributes: Encodable, Sendable { var attributes: [String: AttributeValue] }
            try api.read(call) { engine, now in Attributes(attributes: engine.snapshot(for: "", now: now).attributes) }
        },
        APIRoute("PATCH", "rooms/{room}/attributes") { api, call in
            var args = try call.body()
            args["force"] = .bool(true)
            try api.run(call, op: "attr.set", args: args)
        },
        APIRoute("DELETE", "rooms/{room}/attributes/{key}") { api, call in
            try api.run(call, op: "attr.delete", args: ["keys": .array([.string(call.parameters["key"])]), "force": .bool(true)])
        },
        // The same for a key no path can name (one holding `/`), given in the query.
        APIRoute("DELETE", "rooms/{room}/attributes") { api, call in
            guard let key = call.query["name"], !key.isEmpty else {
                throw APIFailure(ProtocolError(.badRequest, "name the key: DELETE /v1/rooms/ROOM/attributes?name=KEY (or /attributes/KEY)"))
            }
            try api.run(call, op: "attr.delete", args: ["keys": .array([.string(key)]), "force": .bool(true)])
        },

        APIRoute("POST", "conversations") { try $0.createGroup($1) },
        APIRoute("GET", "conversations/{conversation}") { api, call in
            let id = call.parameters["conversation"]
            try api.messaging(call) { messaging, _ in try messaging.conversation(id) }
        },
        APIRoute("POST", "conversations/{conversation}/members") { try $0.addMembers($1) },
        APIRoute("DELETE", "conversations/{conversation}/members/{user}") { api, call in
            let (id, user, by) = (call.parameters["conversation"], call.parameters["user"], call.claims.sub)
            guard Identifier.isValid(user) else { throw APIFailure(ProtocolError(.badRequest, "the user must be an id of 1 to 64 characters of A-Z a-z 0-9 _ . @ -")) }
            try api.messaging(call) { messaging, _ in try messaging.removeMember(user, from: id, by: by) }
        },
        APIRoute("GET", "conversations/{conversation}/messages") { api, call in
            let id = call.parameters["conversation"]
            let after = Int64(try call.queryInt("after", in: 0...Int.max) ?? 0)
            let limit = try call.queryInt("limit", in: 1...200) ?? 100
            try api.messaging(call) { messaging, _ in try messaging.messages(in: id, after: after, limit: limit) }
        },
        APIRoute("POST", "conversations/{conversation}/messages") { try $0.postMessage($1, direct: false) },
        APIRoute("DELETE", "conversations/{conversation}/messages/{seq}") { api, call in
            let (id, by) = (call.parameters["conversation"], call.claims.sub)
            guard let seq = Int64(call.parameters["seq"]), seq > 0 else { throw APIFailure(ProtocolError(.badRequest, "the seq must be a whole number from 1")) }
            try api.messaging(call) { messaging, _ in try messaging.delete(seq, in: id, by: by) }
        },
        APIRoute("POST", "users/{user}/messages") { try $0.postMessage($1, direct: true) },
        APIRoute("POST", "users/{user}/sessions/revoke") { try $0.revokeSessions($1) },
        APIRoute("POST", "users/{user}/logs") { try $0.askLog($1) },
        APIRoute("GET", "logs/{log}") { api, call in
            let id = call.parameters["log"]
            try api.messaging(call) { messaging, _ in try messaging.logStatus(id) }
        },
        APIRoute("GET", "logs/{log}/content") { try $0.logContent($1) },
        APIRoute("GET", "held-messages") { api, call in
            let after = call.query["after"].flatMap { $0.isEmpty ? nil : $0 }
            if let after, after.count > 64 { throw APIFailure(ProtocolError(.badRequest, "after must be a held message's id (at most 64 characters)")) }
            let limit = try call.queryInt("limit", in: 1...200) ?? 100
            try api.messaging(call) { messaging, _ in try messaging.heldMessages(after: after, limit: limit) }
        },
        APIRoute("POST", "held-messages/{held}/release") { api, call in
            let id = call.parameters["held"]
            try api.messaging(call) { messaging, now in try messaging.release(id, now: now) }
        },
        APIRoute("POST", "held-messages/{held}/reject") { api, call in
            let id = call.parameters["held"]
            let reason = try call.body()["reason"]
            guard reason == nil || (reason?.stringValue.map { $0.count <= 500 } ?? false) else {
                throw APIFailure(ProtocolError(.badRequest, "reason must be a string of at most 500 characters"))
            }
            try api.messaging(call) { messaging, _ in try messaging.reject(id, reason: reason?.stringValue ?? "") }
        },

        APIRoute("GET", "webhooks/events") { try $0.listWebhooks($1) },
        APIRoute("GET", "nodes") { try $0.listNodes($1) },
        APIRoute("POST", "nodes/{node}/drain") { try $0.drainNode($1) },
        APIRoute("POST", "webhooks/events/{event}/replay") { try $0.replayWebhook($1) },
    ]
}

extension ServerAPI {
    func listRooms(_ call: APICall) throws {
        guard call.claims.room == nil || call.claims.room == "*" else {
            throw APIFailure(ProtocolError(.forbidden, "listing rooms needs a token for every room"))
        }
        let limit = try call.queryInt("limit", in: 1...200) ?? 50
        let owner = try call.queryId("owner")
        let stored = try context.store.listRooms(after: try call.queryId("after"), limit: limit, owner: owner)
        let loaded = Dictionary(context.rooms.all.map { ($0.id, $0.memberCount) }) { first, _ in first }
        struct Page: Encodable {
            var rooms: [NamedRoom]
            var next: String?
        }
        let rooms = stored.map { room in
            NamedRoom(
                room: RoomInfo(
                    id: room.id, title: room.title, owner: room.owner, mode: room.mode, seatCount: room.seatCount,
                    announcement: room.announcement, chatMutedAll: room.chatMutedAll, createdAt: room.createdAt,
                    memberCount: loaded[room.id] ?? 0, maxMembers: room.maxMembers),
                ownerName: room.names?[room.owner])
        }
        let page = Page(rooms: rooms, next: rooms.count == limit ? rooms.last?.room.id : nil)
        call.exchange.respond(HTTPResponse(status: 200, body: Array(WireEncoder.encode(page))))
    }

    /// What `POST /v1/rooms` takes.
    static let newRoomFields: Set<String> = ["id", "owner", "title", "seatCount", "mode", "announcement", "maxMembers"]

    /// The fields each call's body may have (docs/openapi.yaml's request bodies): any other is refused.
    static let bodyFields: [String: Set<String>] = [
        "POST rooms": newRoomFields,
        "PATCH rooms/{room}": ["title", "announcement", "mode", "seatCount"],
        "POST rooms/{room}/gifts": ["from", "to", "index", "pack", "item", "count", "key"],
        "POST rooms/{room}/mute-chat": ["on"],
        "POST rooms/{room}/emoji": ["on"],
        "POST rooms/{room}/mute-all": ["muted", "membersMayUnmute"],
        "POST rooms/{room}/members/{user}/kick": ["banSeconds"],
        "PUT rooms/{room}/members/{user}/role": ["role"],
        "POST rooms/{room}/members/{user}/mute-chat": ["seconds"],
        "POST rooms/{room}/members/{user}/invite": ["index"],
        "POST rooms/{room}/seats/{index}/lock": ["locked", "kick"],
        "POST rooms/{room}/seats/{index}/mute": ["muted"],
        "POST rooms/{room}/requests/{request}/accept": ["index"],
        "POST rooms/{room}/chat": ["type", "text", "payload", "from"],
        "POST rooms/{room}/signals": ["to", "type", "payload", "from"],
        "PATCH rooms/{room}/attributes": ["attrs", "deleteOnLeave", "updateOwner"],
        "POST conversations": ["title", "owner", "members", "access", "about"],
        "POST conversations/{conversation}/members": ["users"],
        "POST conversations/{conversation}/messages": messageFields,
        "POST users/{user}/messages": messageFields,
        "POST held-messages/{held}/reject": ["reason"],
        "POST users/{user}/sessions/revoke": ["reason"],
        "POST users/{user}/logs": ["minutes", "until", "reason"],
    ]

    /// What a message posted through the API may have (`msg.send`'s args, and who sends it).
    static let messageFields: Set<String> = ["from", "type", "text", "payload", "fallback", "replyTo", "mentions"]

    /// `POST /v1/users/{user}/sessions/revoke`: tokens the user was given until now are refused,
    /// and the user's live sessions end (`session.ended`, reason `revoked`, close 4001) on every
    /// node.
    func revokeSessions(_ call: APICall) throws {
        let user = call.parameters["user"]
        guard Identifier.isValid(user) else { throw APIFailure(ProtocolError(.badRequest, "the user must be an id of 1 to 64 characters of A-Z a-z 0-9 _ . @ -")) }
        let given = try call.body()["reason"]
        guard given == nil || (given?.stringValue.map { !$0.isEmpty && $0.count <= 200 } ?? false) else {
            throw APIFailure(ProtocolError(.badRequest, "reason must be a text of 1 to 200 characters"))
        }
        let reason = given?.stringValue ?? "revoked by the app"
        let now = context.now()
        try context.store.revokeSessions(of: user, reason: reason, now: now)
        let ending = SessionEnding.revoked(user, message: reason)
        let ended = ending.carryOut(on: context.presence)
        context.messagingBus?.publish(ending)
        context.logger.log(.info, "sessions of \(user) revoked: \(reason)", event: "sessions.revoked", fields: ["user": user, "reason": reason])
        struct Revoked: Encodable {
            var user: String
            var revokedAt: Int64
            var ended: Int
        }
        call.exchange.respond(HTTPResponse(status: 200, body: Array(WireEncoder.encode(Revoked(user: user, revokedAt: now, ended: ended)))))
    }

    func createRoom(_ call: APICall) throws {
        var body = try call.body()
        guard case .string(let id)? = body["id"], Identifier.isValid(id) else {
            throw APIFailure(ProtocolError(.badRequest, "id must be 1 to 64 characters of A-Z a-z 0-9 _ . @ -"))
        }
        if let scope = call.claims.room, scope != "*", scope != id {
            throw APIFailure(ProtocolError(.forbidden, "the token is for room \(scope) only"))
        }
        var owner = call.claims.sub
        switch body.removeValue(forKey: "owner") {
        case nil: break
        case .string(let named)? where Identifier.isValid(named): owner = named
        default: throw APIFailure(ProtocolError(.badRequest, "owner must be a user id of 1 to 64 characters of A-Z a-z 0-9 _ . @ -"))
        }
        body["room"] = body.removeValue(forKey: "id")
        guard case .success(.create(let settings)) = RequestDecoder.roomCommand(op: "room.create", args: body) else {
            if case .failure(let error) = RequestDecoder.roomCommand(op: "room.create", args: body) { throw APIFailure(error) }
            throw APIFailure(ProtocolError(.badRequest, "the room settings are not valid"))
        }
        let host = try context.rooms.create(id, settings: settings, owner: owner, ownedLimit: nil, context: context)
        let exchange = call.exchange
        host.read({ engine, _ in engine.info }) { result in
            guard case .success(let info) = result else {
                if case .failure(let error) = result { exchange.respond(APIFailure(error).response) }
                return
            }
            exchange.respond(HTTPResponse(status: 201, body: Array(WireEncoder.encode(info)), headers: ["Location": "/v1/rooms/\(id)"]))
        }
    }

    func getRoom(_ call: APICall) throws {
        /// What an operator sees of a room: a snapshot without a member's own part.
        struct RoomView: Encodable, Sendable {
            var room: NamedRoom
            var seq: Int64
            var seats: [Seat]
            var members: [Member]
            var attributes: [String: AttributeValue]
            var requests: [SeatRequest]
            var chat: RoomSnapshot.ChatState
        }
        let viewer = call.claims.sub
        try read(call) { engine, now in
            let snapshot = engine.snapshot(for: viewer, now: now, asModerator: true)
            return RoomView(
                room: NamedRoom(room: snapshot.room, ownerName: engine.name(of: engine.owner)), seq: snapshot.seq, seats: snapshot.seats, members: snapshot.members, attributes: snapshot.attributes,
                requests: snapshot.requests, chat: snapshot.chat)
        }
    }

    func setRole(_ call: APICall) throws {
        let body = try call.body()
        let user = JSONValue.string(call.parameters["user"])
        if case .string("owner")? = body["role"] {
            try run(call, op: "member.transferOwner", args: ["user": user])
        } else {
            try run(call, op: "member.role", args: body.merging(["user": user]) { $1 })
        }
    }

    /// The caller a message or signal comes from: `from: {id, name}` in the body (a named bot
    /// user), else the system (`system`, "System").
    func sender(_ call: APICall, _ body: inout [String: JSONValue]) throws -> Caller {
        var grants = call.claims.effectiveGrants
        grants.chat = true
        guard let from = body.removeValue(forKey: "from") else {
            return Caller(id: "system", name: "System", grants: grants, isOperator: true)
        }
        guard case .object(let fields) = from, case .string(let id)? = fields["id"], Identifier.isValid(id) else {
            throw APIFailure(ProtocolError(.badRequest, "from.id must be a user id of 1 to 64 characters of A-Z a-z 0-9 _ . @ -"))
        }
        if let unknown = fields.keys.sorted().first(where: { $0 != "id" && $0 != "name" }) {
            throw APIFailure(ProtocolError(.badRequest, "from.\(unknown) is not a field of from (id, name)"))
        }
        if case .string(let text)? = fields["name"], text.contains("\u{0}") {
            throw APIFailure(ProtocolError(.badRequest, "from.name must not contain NUL"))
        }
        var name = id
        switch fields["name"] {
        case nil: break
        case .string(let text)? where text.count <= RequestDecoder.Limits.name: name = DisplayName.clean(text)
        default: throw APIFailure(ProtocolError(.badRequest, "from.name must be a string of at most \(RequestDecoder.Limits.name) characters"))
        }
        return Caller(id: id, name: name.isEmpty ? id : name, grants: grants, isOperator: true)
    }

    func sendChat(_ call: APICall) throws {
        var body = try call.body()
        let caller = try sender(call, &body)
        // The idempotency key doubles as the message's client id, so a retry posts it once.
        let clientMsgId = call.request.headers["idempotency-key"] ?? ("api-" + HMACSHA256.randomBytes(8).map { String(format: "%02x", $0) }.joined())
        body["clientMsgId"] = .string(clientMsgId)
        try run(call, op: "chat.send", args: body, caller: caller)
    }

    func sendSignal(_ call: APICall) throws {
        var body = try call.body()
        let caller = try sender(call, &body)
        if body["to"] == nil { body["to"] = .string("room") }
        try run(call, op: "signal.send", args: body, caller: caller)
    }

    func listWebhooks(_ call: APICall) throws {
        let state = call.query["state"]
        if let state, !["pending", "delivered", "failed"].contains(state) {
            throw APIFailure(ProtocolError(.badRequest, "state must be pending, delivered or failed"))
        }
        let limit = try call.queryInt("limit", in: 1...500) ?? 100
        let after = try call.queryInt("after", in: 0...Int.max).map(Int64.init)
        let records = try context.store.webhookRecords(state: state, room: try call.queryId("room"), after: after, limit: limit)
        struct Page: Encodable {
            var events: [Store.WebhookRecord]
            var next: Int64?
            var queueDepth: Int
        }
        let page = Page(events: records, next: records.count == limit ? records.last?.cursor : nil, queueDepth: try context.store.webhookQueueDepth())
        call.exchange.respond(HTTPResponse(status: 200, body: Array(WireEncoder.encode(page))))
    }

    func replayWebhook(_ call: APICall) throws {
        let id = call.parameters["event"]
        guard try context.store.replayWebhook(id, now: context.now()) else {
            throw APIFailure(ProtocolError(.unsupported, "no webhook event \(id)"), status: 404)
        }
        context.webhooks?.poke()
        call.exchange.respond(HTTPResponse(status: 200, body: Array("{}".utf8)))
    }

    func listNodes(_ call: APICall) throws {
        let nodes: [NodeInfo]
        do {
            nodes = try context.nodes()
        } catch {
            throw APIFailure(ProtocolError(.internal, "the cluster's registry cannot be read now: \(error)"), status: 503)
        }
        struct Page: Encodable {
            var nodes: [NodeInfo]
            var node: String
        }
        call.exchange.respond(HTTPResponse(status: 200, body: Array(WireEncoder.encode(Page(nodes: nodes, node: context.node.id)))))
    }

    /// Drains a node of the cluster (this one, or another through the registry): it takes no
    /// new rooms and hands its rooms, with their members, to the other nodes.
    func drainNode(_ call: APICall) throws {
        let id = call.parameters["node"]
        guard let registry = context.registry else {
            throw APIFailure(ProtocolError(.unsupported, "this server is not a node of a cluster (it runs without --redis)"), status: 404)
        }
        if id == context.node.id {
            context.drain()
        } else {
            let nodes: [NodeInfo]
            do {
                nodes = try registry.nodes()
            } catch {
                throw APIFailure(ProtocolError(.internal, "the cluster's registry cannot be reached now: \(error)"), status: 503)
            }
            guard let node = nodes.first(where: { $0.id == id }) else {
                throw APIFailure(ProtocolError(.unsupported, "no live node \(id)"), status: 404)
            }
            do {
                try registry.requestDrain(of: node)
            } catch {
                throw APIFailure(ProtocolError(.internal, "the cluster's registry cannot be reached now: \(error)"), status: 503)
            }
        }
        struct Answer: Encodable {
            var node: String
            var state: NodeInfo.State
        }
        call.exchange.respond(HTTPResponse(status: 202, body: Array(WireEncoder.encode(Answer(node: id, state: .draining)))))
    }
}
