import Foundation
import MajlisCommandLine
import MajlisLab
import MajlisPacks
import MajlisProtocol
import MajlisTestSupport
import MajlisTransport

/// `majlis bench messaging`: conversations outside rooms on a real `majlis serve` (a child
/// process): one-to-one delivery to an online recipient, a message to a large group to its last
/// member, and an offline device catching up. Prints figures; asserts nothing.
enum MessagingBenchmark {
    static let help = """
        usage: majlis bench messaging [--direct N] [--group N] [--group-messages N] [--conversations N] [--per-conversation N] [--loops N]
                                      [--postgres URL --redis URL [--only nodes]]
        First times a 300 µs piece of arithmetic on the idle machine (the latency tail the machine itself adds).
        Then starts `majlis serve` on a free loopback port and prints:
        one-to-one delivery to an online recipient (--direct messages, default 200, one per 20 ms): from the send to
        the recipient's msg.new, p50/p99;
        a group of --group online members (default 2000): --group-messages messages (default 50, one per 200 ms), from
        the send to the last member's msg.new, p50/p99, beside the yardstick: the same members in a room, the same
        number of room chat messages to them, timed the same way; then as many seat emoji to that room (from an emoji
        pack the bench uploads, docs/protocol.md section 19), timed the same way, beside the room chat; then as many
        gifts the bench posts as the app's backend (POST /v1/rooms/ROOM/gifts), from the call to the last member;
        an offline device catching up: --conversations groups (default 100) get --per-conversation messages each
        (default 100) while the user is away, then it connects and lists and syncs them all (pages of 200), timed from
        its hello to the last page.
        With --postgres and --redis (as for `majlis bench cluster`): two nodes of a cluster on them, and one-to-one
        delivery (--direct messages) from a sender on one node to a recipient on the other, beside the yardstick: the
        same from a sender on the recipient's node. --only nodes measures only that.
        """

    static func run(_ arguments: [String]) throws -> Int32 {
        var args = try Arguments(arguments)
        if args.wantsHelp {
            say(help)
            return 0
        }
        let direct = try args.int("direct", default: 200, range: 1...100_000)
        let groupSize = try args.int("group", default: 2000, range: 2...20_000)
        let groupMessages = try args.int("group-messages", default: 50, range: 1...10_000)
        let conversations = try args.int("conversations", default: 100, range: 1...10_000)
        let perConversation = try args.int("per-conversation", default: 100, range: 1...10_000)
        let loops = try args.int("loops", default: 2, range: 1...16)
        let postgres = args.string("postgres"), redis = args.string("redis")
        let only = args.string("only")
        guard only == nil || (only == "nodes" && postgres != nil && redis != nil) else {
            throw Arguments.Failure(description: "--only nodes needs --postgres and --redis\n\(help)")
        }
        try args.rejectPositional("bench messaging")
        raiseFileLimit()
        say(HostNoise.measure().summary)
        if only == nil {
            try onOneNode(direct: direct, groupSize: groupSize, groupMessages: groupMessages, conversations: conversations, perConversation: perConversation, loops: loops)
        }
        if let postgres, let redis { try acrossNodes(direct: direct, postgres: postgres, redis: redis) }
        return 0
    }

    /// One-to-one, a large group and an offline device, on one `majlis serve`.
    static func onOneNode(direct: Int, groupSize: Int, groupMessages: Int, conversations: Int, perConversation: Int, loops: Int) throws {

        // The group: its owner, its writers and the timed members.
        // Senders write to a recipient who does not write back: no stranger's limit here.
        let server = try ServerProcess(extra: [
            "--max-group-members", String(max(500, groupSize + (groupMessages + 9) / 10 + 1)), "--stranger-messages", "1000000",
        ])
        defer { server.stop() }
        say("majlis bench messaging: server pid \(server.pid)")
        let clientLoops = try (0..<loops).map { _ in try WebSocketClient() }
        let controlLoop = try WebSocketClient()
        defer {
            clientLoops.forEach { $0.stop() }
            controlLoop.stop()
        }
        func connect(_ user: String, on loop: WebSocketClient) throws -> BenchClient {
            let client = BenchClient(user: user, token: ServerProcess.token(user))
            client.connection = try loop.connect(url: server.url, delegate: client)
            return client
        }

        // One-to-one: each message carries its send time; the recipient records its arrival.
        // The senders take turns, ten messages each (a user's chat burst: 10, then 2 a second).
        let recipient = try connect("recipient", on: controlLoop)
        let senders = try (0..<(direct + 9) / 10).map { try connect("s\($0)", on: controlLoop) }
        try BenchClient.waitAll(senders + [recipient], timeout: 30) { $0.signedIn }
        for index in 0..<direct {
            let sentAt = MonotonicClock.nanoseconds()
            senders[index / 10].send(id: Int64(1_000_000 + index), "msg.send", ["to": "recipient", "text": .string("t=\(sentAt)"), "clientMsgId": .string("d\(index)")])
            Thread.sleep(forTimeInterval: 0.02)
        }
        try BenchClient.waitAll([recipient], timeout: 60) { $0.chatCount >= direct }
        let delivered = recipient.chatLatencies
        say(String(format: "one-to-one, online recipient (%d messages): p50 %.2f ms, p99 %.2f ms, max %.2f ms",
                   delivered.count, percentile(delivered, 0.5), percentile(delivered, 0.99), delivered.max() ?? 0))

        // A large group: every member online; each message timed to its last member. The
        // messages come from writers in the group, ten each, who are not among the timed members.
        let owner = try connect("owner", on: controlLoop)
        let groupWriters = try (0..<(groupMessages + 9) / 10).map { try connect("gw\($0)", on: controlLoop) }
        var members: [BenchClient] = []
        for index in 0..<groupSize {
            members.append(try connect("m\(index)", on: clientLoops[index % loops]))
            if index % 200 == 199 { try BenchClient.waitAll(members, timeout: 60) { $0.signedIn } }
        }
        try BenchClient.waitAll(members + groupWriters + [owner], timeout: 120) { $0.signedIn }
        let made = try owner.request("conv.create", ["title": "Bench", "members": .array(groupWriters.map { .string($0.user) })])
        guard let group = made["conversation"]?["id"]?.stringValue else { throw Arguments.Failure(description: "conv.create answered \(made)") }
        for start in stride(from: 0, to: members.count, by: 100) {
            let batch = members[start..<min(members.count, start + 100)].map { JSONValue.string($0.user) }
            _ = try owner.request("conv.invite", ["conversation": .string(group), "users": .array(batch)])
        }
        Thread.sleep(forTimeInterval: 1)
        for member in members { member.resetChat() }
        for index in 0..<groupMessages {
            let sentAt = MonotonicClock.nanoseconds()
            groupWriters[index / 10].send(id: Int64(2_000_000 + index), "msg.send", ["conversation": .string(group), "text": .string("t=\(sentAt)"), "clientMsgId": .string("g\(index)")])
            Thread.sleep(forTimeInterval: 0.2)
        }
        let fanOut = try toLast(members, messages: groupMessages)
        say(String(format: "group of %d online members (%d messages): to the last member p50 %.2f ms, p99 %.2f ms; every delivery p50 %.2f ms, p99 %.2f ms",
                   groupSize, groupMessages, fanOut.last.p50, fanOut.last.p99, fanOut.every.p50, fanOut.every.p99))

        // The yardstick, same members, same machine, same run: a room's chat to all of them.
        _ = try owner.call(.create(RoomSettings(title: "Yardstick")), room: "yard")
        for client in members + groupWriters { _ = try client.call(.join(create: nil), room: "yard") }
        Thread.sleep(forTimeInterval: 1)
        for member in members { member.resetChat() }
        for index in 0..<groupMessages {
            let sentAt = MonotonicClock.nanoseconds()
            groupWriters[index / 10].send(id: Int64(2_500_000 + index), "chat.send", ["room": "yard", "text": .string("t=\(sentAt)"), "clientMsgId": .string("y\(index)")])
            Thread.sleep(forTimeInterval: 0.2)
        }
        let room = try toLast(members, messages: groupMessages)
        say(String(format: "yardstick, room chat to the same %d members: to the last member p50 %.2f ms, p99 %.2f ms; group / room: p50 %.2f, p99 %.2f",
                   groupSize, room.last.p50, room.last.p99, fanOut.last.p50 / max(room.last.p50, 0.001), fanOut.last.p99 / max(room.last.p99, 0.001)))

        // Seat emoji to the same room (issue 55: the budget of chat, p99 under 50 ms to the last
        // member), from an emoji pack of one item a message, so that each arrival is matched to
        // its send.
        let pack = try emojiPack(items: groupMessages)
        let origin = server.url.replacingOccurrences(of: "ws://", with: "http://").replacingOccurrences(of: "/v1/signal", with: "")
        let backend = try AdminClient(server: origin, token: ServerProcess.adminToken, trusting: nil)
        let uploaded = try backend.call("POST", "/v1/packs", bytes: pack.bytes, type: "application/zip")
        guard uploaded["pack"]?["sha256"]?.stringValue == pack.sha else { throw Arguments.Failure(description: "POST /v1/packs answered \(uploaded)") }
        for member in members { member.resetChat() }
        for index in 0..<groupMessages {
            BenchClient.emojiSentAt.withLock { $0[index] = MonotonicClock.nanoseconds() }
            groupWriters[index / 10].send(
                id: Int64(2_700_000 + index), "seat.emoji", ["room": "yard", "index": 0, "pack": .string(pack.sha), "item": .string("e\(index)")])
            Thread.sleep(forTimeInterval: 0.2)
        }
        let emoji = try toLast(members, messages: groupMessages)
        say(String(format: "seat emoji to the same %d members: to the last member p50 %.2f ms, p99 %.2f ms; emoji / room chat: p50 %.2f, p99 %.2f",
                   groupSize, emoji.last.p50, emoji.last.p99, emoji.last.p50 / max(room.last.p50, 0.001), emoji.last.p99 / max(room.last.p99, 0.001)))

        // Gifts the backend posts through the server API, timed from the call (the HTTP request
        // and the store's commit are in the figure), matched to their arrival by item as above.
        let gifts = try emojiPack(items: groupMessages, kind: "gift")
        _ = try backend.call("POST", "/v1/packs", bytes: gifts.bytes, type: "application/zip")
        for member in members { member.resetChat() }
        for index in 0..<groupMessages {
            BenchClient.emojiSentAt.withLock { $0[index] = MonotonicClock.nanoseconds() }
            _ = try backend.call(
                "POST", "/v1/rooms/yard/gifts", body: ["from": "shop", "to": "owner", "pack": .string(gifts.sha), "item": .string("e\(index)"), "key": .string("g\(index)")])
            Thread.sleep(forTimeInterval: 0.2)
        }
        let gift = try toLast(members, messages: groupMessages)
        say(String(format: "gifts from the server API to the same %d members: to the last member p50 %.2f ms, p99 %.2f ms; gift / room chat: p50 %.2f, p99 %.2f",
                   groupSize, gift.last.p50, gift.last.p99, gift.last.p50 / max(room.last.p50, 0.001), gift.last.p99 / max(room.last.p99, 0.001)))
        members.forEach { $0.connection?.close(code: 1000, reason: "done") }

        // An offline device catching up: groups of the absent user and ten writers each, who
        // write within their chat burst (10 each) while the user is away.
        let writersPer = (perConversation + 9) / 10
        var writers: [BenchClient] = []
        for conversation in 0..<conversations {
            for writer in 0..<writersPer { writers.append(try connect("w\(conversation)-\(writer)", on: clientLoops[(conversation + writer) % loops])) }
            if conversation % 20 == 19 { try BenchClient.waitAll(writers, timeout: 60) { $0.signedIn } }
        }
        try BenchClient.waitAll(writers, timeout: 120) { $0.signedIn }
        for conversation in 0..<conversations {
            let own = writers[(conversation * writersPer)..<((conversation + 1) * writersPer)]
            let made = try own.first!.request("conv.create", ["title": .string("c\(conversation)"), "members": .array((own.dropFirst().map(\.user) + ["away"]).map(JSONValue.string))])
            guard let id = made["conversation"]?["id"]?.stringValue else { throw Arguments.Failure(description: "conv.create answered \(made)") }
            for message in 0..<perConversation {
                own[own.startIndex + message / 10].send(id: Int64(3_000_000 + message), "msg.send", ["conversation": .string(id), "text": .string("m\(message)"), "clientMsgId": .string("o\(message)")])
            }
        }
        // Messaging ops are carried out in the order they arrive: once each writer's next request
        // is answered, its messages are stored.
        for writer in writers { _ = try writer.request("conv.list", ["limit": 1]) }

        let started = MonotonicClock.nanoseconds()
        let away = try connect("away", on: controlLoop)
        try BenchClient.waitAll([away], timeout: 30) { $0.signedIn }
        var synced = 0
        var requests = 0
        var after: String?
        var listed: [(id: String, lastSeq: Int64)] = []
        repeat {
            var list: [String: JSONValue] = ["limit": 200]
            if let after { list["after"] = .string(after) }
            let page = try away.request("conv.list", list)
            requests += 1
            let entries = page["conversations"]?.arrayValue ?? []
            listed += entries.compactMap { entry in entry["id"]?.stringValue.map { ($0, entry["lastSeq"]?.intValue ?? 0) } }
            after = page["more"] == true ? entries.last?["id"]?.stringValue : nil
        } while after != nil
        for (id, lastSeq) in listed {
            var from: Int64 = 0
            while from < lastSeq {
                let page = try away.request("msg.sync", ["conversation": .string(id), "after": .int(from), "limit": 200])
                requests += 1
                let messages = page["messages"]?.arrayValue ?? []
                synced += messages.count
                from = messages.last?["seq"]?.intValue ?? lastSeq
            }
        }
        let seconds = Double(MonotonicClock.nanoseconds() - started) / 1e9
        say(String(format: "offline device catching up: %d messages in %d conversations synced in %.2f s (%d requests, from connecting to the last page)",
                   synced, listed.count, seconds, requests))
    }

    /// One-to-one delivery between two nodes of a cluster (the message crosses the messaging bus
    /// in Redis), beside the same delivery within one node of that cluster.
    static func acrossNodes(direct: Int, postgres: String, redis: String) throws {
        try runBlocking {
            let nodes = try await ClusterBenchmark.nodes(2, tag: "msg", postgres: postgres, redis: redis, extra: ["--stranger-messages", "1000000"])
            defer { nodes.forEach { $0.stop() } }
            try measure(direct: direct, sendersOn: nodes[0], recipientOn: nodes[1])
        }
    }

    /// `direct` messages to a recipient on `recipientOn` from senders on `sendersOn`, then from
    /// senders on the recipient's node.
    private static func measure(direct: Int, sendersOn other: ServerProcess, recipientOn node: ServerProcess) throws {
        let nodes = [other, node]
        let loop = try WebSocketClient()
        defer { loop.stop() }
        let run = UUID().uuidString.prefix(8).lowercased()
        var figures: [String: (p50: Double, p99: Double)] = [:]
        for (label, senderNode) in [("across nodes", nodes[0]), ("on one node", nodes[1])] {
            let tag = label == "across nodes" ? "x" : "y"
            let recipient = BenchClient(user: "r\(tag)-\(run)", token: ServerProcess.token("r\(tag)-\(run)"))
            recipient.connection = try loop.connect(url: nodes[1].url, delegate: recipient)
            let senders = try (0..<(direct + 9) / 10).map { index in
                let client = BenchClient(user: "s\(tag)\(index)-\(run)", token: ServerProcess.token("s\(tag)\(index)-\(run)"))
                client.connection = try loop.connect(url: senderNode.url, delegate: client)
                return client
            }
            try BenchClient.waitAll(senders + [recipient], timeout: 30) { $0.signedIn }
            for index in 0..<direct {
                let sentAt = MonotonicClock.nanoseconds()
                senders[index / 10].send(
                    id: Int64(4_000_000 + index), "msg.send", ["to": .string(recipient.user), "text": .string("t=\(sentAt)"), "clientMsgId": .string("\(tag)\(index)")])
                Thread.sleep(forTimeInterval: 0.02)
            }
            try BenchClient.waitAll([recipient], timeout: 60) { $0.chatCount >= direct }
            let delivered = recipient.chatLatencies
            figures[label] = (percentile(delivered, 0.5), percentile(delivered, 0.99))
            say(String(format: "one-to-one %@ (%d messages): p50 %.2f ms, p99 %.2f ms, max %.2f ms",
                       label, delivered.count, percentile(delivered, 0.5), percentile(delivered, 0.99), delivered.max() ?? 0))
            (senders + [recipient]).forEach { $0.connection?.close(code: 1000, reason: "done") }
        }
        if let across = figures["across nodes"], let local = figures["on one node"] {
            say(String(format: "across nodes / on one node: p50 %.2f, p99 %.2f", across.p50 / max(local.p50, 0.001), across.p99 / max(local.p99, 0.001)))
        }
    }

    static func percentile(_ values: [Double], _ fraction: Double) -> Double { SignalingBenchmark.percentile(values, fraction) }

    /// Once every member has heard `messages` timed messages: per message, the time to its last
    /// member, and every delivery's time (p50 and p99 of each).
    /// An emoji pack of items `e0` ... `e<count - 1>`, all one tiny WebP, and its name.
    static func emojiPack(items count: Int, kind: String = "emoji") throws -> (bytes: [UInt8], sha: String) {
        let items = (0..<count).map { #"{"id": "e\#($0)", "format": "webp", "animation": "e.webp"}"# }.joined(separator: ", ")
        let manifest = #"{"id": "bench-\#(kind)", "kind": "\#(kind)", "names": {"en": "Bench"}, "items": [\#(items)]}"#
        let bytes = try PackArchives.zip([("manifest.json", PackArchives.json(manifest)), ("e.webp", Array("RIFF....WEBP".utf8))])
        return (bytes, ResourcePack.sha256(bytes))
    }

    static func toLast(_ members: [BenchClient], messages: Int) throws -> (last: (p50: Double, p99: Double), every: (p50: Double, p99: Double)) {
        try BenchClient.waitAll(members, timeout: 120) { $0.chatCount >= messages }
        let latencies = members.map(\.chatLatencies)
        let last = (0..<messages).map { index in latencies.map { $0[index] }.max() ?? 0 }
        let every = latencies.flatMap { $0 }
        return ((percentile(last, 0.5), percentile(last, 0.99)), (percentile(every, 0.5), percentile(every, 0.99)))
    }
}
