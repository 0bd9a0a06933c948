import Foundation

/// Turns one text frame into a request, strictly: a wrong type, a missing field or a value out of
/// range is a `bad_request` naming the field; an unknown op is `unsupported`. Never traps.
public enum RequestDecoder {
    /// What a frame decoded to.
    public enum Outcome: Sendable, Equatable {
        case request(IncomingRequest)
        /// The frame is answered with this error; `re` is its id when it had an integer one.
        case invalid(re: Int64?, ProtocolError)
    }

    /// Limits on free-text fields, in characters.
    public enum Limits {
        public static let title = 128
        public static let announcement = 1024
        public static let name = 64
        public static let avatar = 1024
        public static let type = 64
        public static let clientId = 64
        public static let rid = 64
        /// Distinct users one `signal.send` may name.
        public static let signalTargets = 100
        /// A conversation message's text, and a card's fallback text.
        public static let messageText = 4_000
        public static let fallback = 200
        /// Users one message may mention, and one `conv.create` or `conv.invite` may name.
        public static let mentions = 50
        public static let invitees = 100
    }

    /// Decodes one frame.
    public static func decode(_ frame: Data) -> Outcome {
        let value: JSONValue
        do {
            value = try JSONParser(maxValues: JSONParser.maxRequestValues).parse(frame)
        } catch {
            return .invalid(re: peekId(frame), ProtocolError(.badRequest, "a frame must be one JSON object (\(error))"))
        }
        guard case .object(let fields) = value else {
            return .invalid(re: nil, ProtocolError(.badRequest, "a frame must be one JSON object"))
        }
        let id = fields["id"]?.intValue
        guard let id, case .int = fields["id"]! else {
            return .invalid(re: nil, ProtocolError(.badRequest, "id must be an integer"))
        }
        guard case .string(let op)? = fields["op"] else {
            return .invalid(re: id, ProtocolError(.badRequest, "op must be a string"))
        }
        guard let parse = parsers[op] else {
            return .invalid(re: id, ProtocolError(.unsupported, "unknown op '\(op)'"))
        }
        var rid: String?
        switch fields["rid"] {
        case nil, .null?: rid = nil
        case .string(let text)? where !text.isEmpty && text.count <= Limits.rid: rid = text
        default: return .invalid(re: id, ProtocolError(.badRequest, "rid must be a string of 1 to 64 characters"))
        }
        do {
            let command = try parse(ArgsReader(fields["args"]))
            return .request(IncomingRequest(id: id, op: op, rid: rid, command: command))
        } catch {
            return .invalid(re: id, error)
        }
    }

    /// The room command that `op` with these `args` (as a client would send them, `room`
    /// included) stands for, validated exactly as a frame's; for callers that are not a
    /// WebSocket session, like the server API.
    public static func roomCommand(op: String, args: [String: JSONValue]) -> Result<RoomCommand, ProtocolError> {
        guard let parse = parsers[op] else { return .failure(ProtocolError(.unsupported, "unknown op '\(op)'")) }
        do {
            guard case .room(_, let command) = try parse(ArgsReader(.object(args))) else {
                return .failure(ProtocolError(.unsupported, "'\(op)' is not a room op"))
            }
            return .success(command)
        } catch {
            return .failure(error)
        }
    }

    /// The messaging command that `op` with these `args` stands for, validated exactly as a
    /// frame's (for the server API).
    public static func messagingCommand(op: String, args: [String: JSONValue]) -> Result<MessagingCommand, ProtocolError> {
        guard let parse = parsers[op] else { return .failure(ProtocolError(.unsupported, "unknown op '\(op)'")) }
        do {
            guard case .messaging(let command) = try parse(ArgsReader(.object(args))) else {
                return .failure(ProtocolError(.unsupported, "'\(op)' is not a messaging op"))
            }
            return .success(command)
        } catch {
            return .failure(error)
        }
    }

    /// The frame's integer `id` found by a scan without decoding (for answering a frame that is
    /// refused before any work is spent on it): the first `"id"` key followed by an integer.
    public static func peekId(_ frame: Data) -> Int64? {
        let bytes = [UInt8](frame)
        let key: [UInt8] = Array("\"id\"".utf8)
        var index = 0
        while index + key.count <= bytes.count {
            guard bytes[index] == key[0], bytes[index..<(index + key.count)].elementsEqual(key) else {
                index += 1
                continue
            }
            var cursor = index + key.count
            func skipSpace() { while cursor < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[cursor]) { cursor += 1 } }
            skipSpace()
            guard cursor < bytes.count, bytes[cursor] == UInt8(ascii: ":") else {
                index += 1
                continue
            }
            cursor += 1
            skipSpace()
            var negative = false
            if cursor < bytes.count, bytes[cursor] == UInt8(ascii: "-") {
                negative = true
                cursor += 1
            }
            var value: Int64 = 0
            var digits = 0
            while cursor < bytes.count, (0x30...0x39).contains(bytes[cursor]), digits < 18 {
                value = value * 10 + Int64(bytes[cursor] - 0x30)
                digits += 1
                cursor += 1
            }
            return digits > 0 ? (negative ? -value : value) : nil
        }
        return nil
    }

    /// Every op this server understands.
    public static var ops: [String] { parsers.keys.sorted() }

    private typealias Parser = @Sendable (ArgsReader) throws(ProtocolError) -> ClientCommand

    private static func room(_ build: @escaping @Sendable (ArgsReader) throws(ProtocolError) -> RoomCommand) -> Parser {
        { (args: ArgsReader) throws(ProtocolError) -> ClientCommand in
            let room = try args.identifier("room")
            return .room(room, try build(args))
        }
    }

    /// `pack` (a resource pack's name: its SHA-256) and `item` (an item id of it), section 19.
    private static func packItem(_ args: ArgsReader) throws(ProtocolError) -> (pack: String, item: String) {
        let pack = try args.string("pack", maxLength: 64)
        guard pack.count == 64, pack.allSatisfy({ $0.isHexDigit && !$0.isUppercase }) else {
            throw ProtocolError(.badRequest, "args.pack must be a pack's name: its SHA-256, 64 lowercase hex digits")
        }
        let item = try args.string("item", maxLength: 64)
        guard !item.isEmpty, item.allSatisfy({ $0.isASCII && ($0.isLowercase || $0.isNumber || "._-".contains($0)) }) else {
            throw ProtocolError(.badRequest, "args.item must be an item id of the pack (a-z, 0-9, '.', '_', '-')")
        }
        return (pack, item)
    }

    private static func settings(_ args: ArgsReader) throws(ProtocolError) -> RoomSettings {
        RoomSettings(
            title: try args.optionalString("title", maxLength: Limits.title) ?? "",
            seatCount: try args.optionalInt("seatCount", in: RoomSettings.seatCountRange) ?? 8,
            mode: try args.optionalEnum("mode", RoomMode.self) ?? .free,
            announcement: try args.optionalString("announcement", maxLength: Limits.announcement) ?? "",
            maxMembers: try args.optionalInt("maxMembers", in: 0...10_000_000) ?? 0)
    }

    private static func attributeSet(_ args: ArgsReader) throws(ProtocolError) -> AttributeOperation {
        .set(
            try args.stringMap("attrs"), deleteOnLeave: try args.optionalBool("deleteOnLeave") ?? false,
            updateOwner: try args.optionalBool("updateOwner") ?? false)
    }

    private static func messaging(_ build: @escaping @Sendable (ArgsReader) throws(ProtocolError) -> MessagingCommand) -> Parser {
        { (args: ArgsReader) throws(ProtocolError) -> ClientCommand in .messaging(try build(args)) }
    }

    /// `msg.send`'s draft: text, or a typed card with its fallback.
    private static func draft(_ args: ArgsReader) throws(ProtocolError) -> MessageDraft {
        let clientMsgId = try args.string("clientMsgId", maxLength: Limits.clientId)
        guard !clientMsgId.isEmpty else { throw ProtocolError(.badRequest, "args.clientMsgId must not be empty") }
        let type = try args.optionalString("type", maxLength: Limits.type) ?? "text"
        guard !type.isEmpty else { throw ProtocolError(.badRequest, "args.type must not be empty") }
        let text = try args.optionalString("text", maxLength: Limits.messageText)
        let payload = args.raw("payload")
        let fallback = try args.optionalString("fallback", maxLength: Limits.fallback)
        if type == "text" {
            guard let text, !text.isEmpty else { throw ProtocolError(.badRequest, "a text message needs args.text") }
        } else if fallback?.isEmpty ?? true {
            throw ProtocolError(.badRequest, "a message of type '\(type)' needs args.fallback: what a client that does not know the type shows")
        }
        let replyTo = try args.optionalInt("replyTo", in: 1...Int.max).map(Int64.init)
        let mentions = args.raw("mentions") == nil ? [] : try args.identifierSet("mentions", maxCount: Limits.mentions)
        return MessageDraft(type: type, text: text, payload: payload, fallback: fallback, replyTo: replyTo, mentions: mentions, clientMsgId: clientMsgId)
    }

    private static let parsers: [String: Parser] = [
        "hello": { args throws(ProtocolError) in
            var client: HelloArgs.ClientInfo?
            if let info = args.raw("client") {
                let reader = try ArgsReader(info)
                client = HelloArgs.ClientInfo(
                    sdk: try reader.optionalString("sdk", maxLength: 64),
                    version: try reader.optionalString("version", maxLength: 64),
                    platform: try reader.optionalString("platform", maxLength: 64))
            }
            return .hello(
                HelloArgs(token: try args.string("token", maxLength: 8192), client: client,
                          resume: try args.optionalString("resume", maxLength: 128), device: try args.optionalIdentifier("device"),
                          via: try args.optionalString("via", maxLength: 128),
                          relay: try args.optionalString("relay", maxLength: 1024)))
        },
        "ping": { _ in .ping },
        "session.renew": { args throws(ProtocolError) in .renew(token: try args.string("token", maxLength: 8192)) },
        "bye": { _ in .bye },
        "echo.start": { args throws(ProtocolError) in
            .echoStart(delay: try args.optionalInt("delay", in: 1_000...10_000) ?? 3_000, sdp: try args.optionalString("sdp", maxLength: 65_536))
        },
        "echo.stop": { _ in .echoStop },
        "probe.start": { args throws(ProtocolError) in
            .probeStart(
                up: try args.optionalInt("up", in: 64_000...10_000_000) ?? 500_000,
                down: try args.optionalInt("down", in: 64_000...10_000_000) ?? 500_000)
        },
        "probe.result": { _ in .probeResult },
        "probe.stop": { _ in .probeStop },

        "conv.create": messaging { args throws(ProtocolError) in
            let title = try args.nonBlankString("title", maxLength: Limits.title)
            let members = args.raw("members") == nil ? [] : try args.identifierSet("members", maxCount: Limits.invitees)
            return .createGroup(
                title: title, members: members, access: try args.optionalEnum("access", GroupAccess.self) ?? .private,
                about: try args.optionalString("about", maxLength: Limits.announcement))
        },
        "conv.list": messaging { args throws(ProtocolError) in
            .list(after: try args.optionalIdentifier("after"), limit: try args.optionalInt("limit", in: 1...200) ?? 100)
        },
        "conv.get": messaging { args throws(ProtocolError) in .get(conversation: try args.identifier("conversation")) },
        "conv.invite": messaging { args throws(ProtocolError) in
            let users = try args.identifierSet("users", maxCount: Limits.invitees)
            guard !users.isEmpty else { throw ProtocolError(.badRequest, "args.users must name at least one user") }
            return .invite(conversation: try args.identifier("conversation"), users: users)
        },
        "conv.remove": messaging { args throws(ProtocolError) in
            .remove(conversation: try args.identifier("conversation"), user: try args.identifier("user"))
        },
        "conv.leave": messaging { args throws(ProtocolError) in .leave(conversation: try args.identifier("conversation")) },
        "conv.update": messaging { args throws(ProtocolError) in
            let title = args.raw("title") == nil ? nil : try args.nonBlankString("title", maxLength: Limits.title)
            let about = try args.optionalString("about", maxLength: Limits.announcement)
            let access = try args.optionalEnum("access", GroupAccess.self)
            guard title != nil || about != nil || access != nil else { throw ProtocolError(.badRequest, "conv.update needs args.title, args.about or args.access") }
            return .update(conversation: try args.identifier("conversation"), title: title, about: about, access: access)
        },
        "conv.discover": messaging { args throws(ProtocolError) in
            let query = try args.optionalString("q", maxLength: 200)
            return .discover(
                query: query?.contains(where: { $0.isLetter || $0.isNumber }) == true ? query : nil, cursor: try args.optionalString("cursor", maxLength: 200),
                limit: try args.optionalInt("limit", in: 1...50) ?? 20)
        },
        "conv.join": messaging { args throws(ProtocolError) in
            .join(conversation: try args.identifier("conversation"), note: try args.optionalString("note", maxLength: 200))
        },
        "conv.requests": messaging { args throws(ProtocolError) in .requests(conversation: try args.identifier("conversation")) },
        "conv.answer": messaging { args throws(ProtocolError) in
            .answerRequest(conversation: try args.identifier("conversation"), user: try args.identifier("user"), accept: try args.bool("accept"))
        },
        "conv.mute": messaging { args throws(ProtocolError) in
            .muteMember(conversation: try args.identifier("conversation"), user: try args.identifier("user"), seconds: try args.int("seconds", in: 0...31_536_000))
        },
        "msg.feature": messaging { args throws(ProtocolError) in
            .feature(conversation: try args.identifier("conversation"), seq: Int64(try args.int("seq", in: 1...Int.max)), featured: try args.optionalBool("featured") ?? true)
        },
        "conv.role": messaging { args throws(ProtocolError) in
            let role = try args.optionalEnum("role", Role.self)
            guard let role, role != .owner else { throw ProtocolError(.badRequest, "args.role must be \"admin\" or \"member\"") }
            return .setRole(conversation: try args.identifier("conversation"), user: try args.identifier("user"), role: role)
        },
        "conv.settings": messaging { args throws(ProtocolError) in
            let muted = try args.optionalBool("muted")
            let pinned = try args.optionalBool("pinned")
            guard muted != nil || pinned != nil else { throw ProtocolError(.badRequest, "conv.settings needs args.muted or args.pinned") }
            return .settings(conversation: try args.identifier("conversation"), muted: muted, pinned: pinned)
        },
        "msg.send": messaging { args throws(ProtocolError) in
            let to = try args.optionalIdentifier("to")
            let conversation = try args.optionalIdentifier("conversation")
            let target: MessageTarget
            switch (to, conversation) {
            case (let user?, nil): target = .user(user)
            case (nil, let id?): target = .conversation(id)
            default: throw ProtocolError(.badRequest, "msg.send needs exactly one of args.to (a user) and args.conversation")
            }
            return .send(target, try draft(args))
        },
        "msg.sync": messaging { args throws(ProtocolError) in
            .sync(
                conversation: try args.identifier("conversation"), after: Int64(try args.optionalInt("after", in: 0...Int.max) ?? 0),
                limit: try args.optionalInt("limit", in: 1...200) ?? 100)
        },
        "msg.read": messaging { args throws(ProtocolError) in
            .read(conversation: try args.identifier("conversation"), seq: Int64(try args.int("seq", in: 0...Int.max)))
        },
        "msg.typing": messaging { args throws(ProtocolError) in .typing(conversation: try args.identifier("conversation")) },
        "msg.report": messaging { args throws(ProtocolError) in
            .report(
                conversation: try args.identifier("conversation"), seq: Int64(try args.int("seq", in: 1...Int.max)),
                reason: try args.optionalString("reason", maxLength: 500) ?? "")
        },
        "msg.search": messaging { args throws(ProtocolError) in
            let query = try args.string("q", maxLength: 200)
            guard query.contains(where: { $0.isLetter || $0.isNumber }) else { throw ProtocolError(.badRequest, "args.q must have a word to look for") }
            return .search(
                query: query, conversation: try args.optionalIdentifier("conversation"),
                cursor: try args.optionalString("cursor", maxLength: 200), limit: try args.optionalInt("limit", in: 1...50) ?? 20)
        },
        "user.block": messaging { args throws(ProtocolError) in .block(user: try args.identifier("user")) },
        "user.unblock": messaging { args throws(ProtocolError) in .unblock(user: try args.identifier("user")) },
        "user.blocks": messaging { _ in .listBlocks },
        "presence.get": messaging { args throws(ProtocolError) in
            let users = try args.identifierSet("users", maxCount: Limits.invitees)
            guard !users.isEmpty else { throw ProtocolError(.badRequest, "args.users must name at least one user") }
            return .presence(users: users)
        },
        "presence.share": messaging { args throws(ProtocolError) in
            guard let share = try args.optionalString("share", maxLength: 16) else { return .sharePresence(nil) }
            guard let sharing = PresenceSharing(rawValue: share) else { throw ProtocolError(.badRequest, "args.share must be contacts or nobody") }
            return .sharePresence(sharing)
        },
        "log.deliver": messaging { args throws(ProtocolError) in
            .deliverLog(request: try args.identifier("id"), media: try args.identifier("media"))
        },
        "msg.edit": messaging { args throws(ProtocolError) in
            let text = try args.string("text", maxLength: Limits.messageText)
            guard !text.isEmpty else { throw ProtocolError(.badRequest, "args.text must not be empty") }
            return .edit(conversation: try args.identifier("conversation"), seq: Int64(try args.int("seq", in: 1...Int.max)), text: text)
        },
        "msg.revoke": messaging { args throws(ProtocolError) in
            .revoke(conversation: try args.identifier("conversation"), seq: Int64(try args.int("seq", in: 1...Int.max)))
        },

        "room.create": room { args throws(ProtocolError) in .create(try settings(args)) },
        "room.join": room { args throws(ProtocolError) in
            guard let create = args.raw("create") else { return .join(create: nil) }
            if case .bool(let flag) = create { return .join(create: flag ? RoomSettings() : nil) }
            return .join(create: try settings(ArgsReader(create)))
        },
        "room.leave": room { _ in .leave },
        "room.sync": room { _ in .sync },
        "room.update": room { args throws(ProtocolError) in
            .update(
                title: try args.optionalString("title", maxLength: Limits.title),
                announcement: try args.optionalString("announcement", maxLength: Limits.announcement),
                mode: try args.optionalEnum("mode", RoomMode.self),
                seatCount: try args.optionalInt("seatCount", in: RoomSettings.seatCountRange))
        },
        "room.muteChatAll": room { args throws(ProtocolError) in .muteChatAll(try args.bool("on")) },
        "room.emoji": room { args throws(ProtocolError) in .allowEmoji(try args.bool("on")) },
        "room.end": room { _ in .end },

        "seat.take": room { args throws(ProtocolError) in .takeSeat(index: try args.optionalInt("index")) },
        "seat.leave": room { _ in .leaveSeat },
        "seat.switch": room { args throws(ProtocolError) in .switchSeat(to: try args.int("to")) },
        "seat.lock": room { args throws(ProtocolError) in
            .lockSeat(index: try args.int("index"), locked: try args.bool("locked"), kick: try args.optionalBool("kick") ?? false)
        },
        "seat.mute": room { args throws(ProtocolError) in .muteSeat(index: try args.int("index"), muted: try args.bool("muted")) },
        "seat.muteAll": room { args throws(ProtocolError) in
            .muteAllSeats(muted: try args.bool("muted"), membersMayUnmute: try args.optionalBool("membersMayUnmute") ?? false)
        },
        "seat.kick": room { args throws(ProtocolError) in .kickFromSeat(index: try args.int("index")) },
        "seat.emoji": room { args throws(ProtocolError) in
            let (pack, item) = try packItem(args)
            return .sendEmoji(index: try args.int("index", in: 0...(RoomSettings.seatCountRange.upperBound - 1)), pack: pack, item: item)
        },
        "gift.send": room { args throws(ProtocolError) in
            let (pack, item) = try packItem(args)
            let to = try args.optionalIdentifier("to")
            let index = try args.optionalInt("index", in: 0...(RoomSettings.seatCountRange.upperBound - 1))
            guard (to == nil) != (index == nil) else { throw ProtocolError(.badRequest, "give either args.to (a member) or args.index (a seat), not both") }
            let key = try args.string("key", maxLength: 64)
            guard !key.isEmpty else { throw ProtocolError(.badRequest, "args.key must be 1 to 64 characters") }
            return .sendGift(
                from: try args.identifier("from"), to: to, index: index, pack: pack, item: item,
                count: try args.optionalInt("count", in: Gift.counts) ?? 1, key: key)
        },
        "gift.leaders": room { args throws(ProtocolError) in
            var since = Int64(try args.optionalInt("since", in: 0...Int.max) ?? 0)
            var until = Int64(try args.optionalInt("until", in: 0...Int.max) ?? Int.max)
            if let day = try args.optionalString("day", maxLength: 10) {
                guard let span = GiftLeaders.span(ofDay: day) else { throw ProtocolError(.badRequest, "args.day must be a date, YYYY-MM-DD (UTC)") }
                since = max(since, span.lowerBound)
                until = min(until, span.upperBound)
            }
            return .giftLeaders(since: since, until: until, limit: try args.optionalInt("limit", in: GiftLeaders.limits) ?? 10)
        },
        "seat.invite": room { args throws(ProtocolError) in
            .inviteToSeat(user: try args.identifier("user"), index: try args.optionalInt("index"))
        },
        "seat.inviteReply": room { args throws(ProtocolError) in
            .replyToInvite(inviteId: try args.string("inviteId", maxLength: Limits.clientId), accept: try args.bool("accept"))
        },
        "mic.set": room { args throws(ProtocolError) in .setMic(on: try args.bool("on")) },

        "request.create": room { args throws(ProtocolError) in .createRequest(index: try args.optionalInt("index")) },
        "request.cancel": room { args throws(ProtocolError) in
            .cancelRequest(requestId: try args.string("requestId", maxLength: Limits.clientId))
        },
        "request.accept": room { args throws(ProtocolError) in
            .acceptRequest(
                requestId: try args.string("requestId", maxLength: Limits.clientId), index: try args.optionalInt("index"))
        },
        "request.reject": room { args throws(ProtocolError) in
            .rejectRequest(requestId: try args.string("requestId", maxLength: Limits.clientId))
        },

        "member.list": room { args throws(ProtocolError) in
            .listMembers(after: try args.optionalString("after", maxLength: Identifier.maxLength),
                         limit: try args.optionalInt("limit", in: 1...200) ?? 100)
        },
        "member.update": room { args throws(ProtocolError) in
            .updateMember(name: try args.optionalString("name", maxLength: Limits.name).map(DisplayName.clean),
                          avatar: try args.optionalString("avatar", maxLength: Limits.avatar),
                          refusesOwnership: try args.optionalBool("refuseOwnership"))
        },
        "member.role": room { args throws(ProtocolError) in
            let role = try args.optionalEnum("role", Role.self)
            guard let role, role != .owner else {
                throw ProtocolError(.badRequest, "args.role must be \"admin\" or \"member\"")
            }
            return .setRole(user: try args.identifier("user"), role: role)
        },
        "member.transferOwner": room { args throws(ProtocolError) in .transferOwner(user: try args.identifier("user")) },
        "member.kick": room { args throws(ProtocolError) in
            .kickMember(user: try args.identifier("user"), banSeconds: try args.optionalInt("banSeconds", in: 0...(10 * 365 * 86_400)) ?? 0)
        },
        "member.unban": room { args throws(ProtocolError) in .unban(user: try args.identifier("user")) },
        "member.muteChat": room { args throws(ProtocolError) in
            .muteChat(user: try args.identifier("user"), seconds: try args.int("seconds", in: 0...(10 * 365 * 86_400)))
        },

        "chat.send": room { args throws(ProtocolError) in
            let clientMsgId = try args.string("clientMsgId", maxLength: Limits.clientId)
            guard !clientMsgId.isEmpty else { throw ProtocolError(.badRequest, "args.clientMsgId must not be empty") }
            let type = try args.optionalString("type", maxLength: Limits.type) ?? "text"
            guard !type.isEmpty else { throw ProtocolError(.badRequest, "args.type must not be empty") }
            let text = try args.optionalString("text")
            let payload = args.raw("payload")
            if text == nil && payload == nil { throw ProtocolError(.badRequest, "chat.send needs text or payload") }
            return .sendChat(ChatDraft(type: type, text: text, payload: payload, clientMsgId: clientMsgId))
        },
        "chat.history": room { args throws(ProtocolError) in
            let before = try args.optionalInt("before")
            return .chatHistory(before: before.map(Int64.init), limit: try args.optionalInt("limit", in: 1...100) ?? 50)
        },

        "attr.set": room { args throws(ProtocolError) in
            .attributes([try attributeSet(args)], force: try args.optionalBool("force") ?? false, atomic: false)
        },
        "attr.delete": room { args throws(ProtocolError) in
            .attributes([.delete(try args.stringList("keys"))], force: try args.optionalBool("force") ?? false, atomic: false)
        },
        "attr.batch": room { args throws(ProtocolError) in
            guard case .array(let items)? = args.raw("ops") else {
                throw ProtocolError(.badRequest, "args.ops must be an array")
            }
            var steps: [AttributeOperation] = []
            for item in items {
                let step = try ArgsReader(item)
                switch try step.string("op") {
                case "set": steps.append(try attributeSet(step))
                case "delete": steps.append(.delete(try step.stringList("keys")))
                case let other: throw ProtocolError(.badRequest, "args.ops[].op '\(other)' must be \"set\" or \"delete\"")
                }
            }
            return .attributes(steps, force: try args.optionalBool("force") ?? false, atomic: true)
        },
        "webrtc.offer": room { args throws(ProtocolError) in .offerWebRTC(sdp: try args.string("sdp", maxLength: 65_536)) },
        "signal.send": room { args throws(ProtocolError) in
            let target: SignalTarget
            switch args.raw("to") {
            case .string("room")?: target = .room
            case .array?: target = .users(try args.identifierSet("to", maxCount: Limits.signalTargets))
            default: throw ProtocolError(.badRequest, "args.to must be \"room\" or an array of user ids")
            }
            return .sendSignal(
                to: target, type: try args.string("type", maxLength: Limits.type), payload: args.raw("payload") ?? .null)
        },
    ]
}
