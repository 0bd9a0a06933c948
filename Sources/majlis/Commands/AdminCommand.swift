import Foundation
import MajlisCommandLine
import MajlisProtocol
import MajlisTransport

/// `majlis admin`: the server API (docs/openapi.yaml) from the command line, for operators and
/// their scripts.
enum AdminCommand {
    static let help = """
        usage: majlis admin COMMAND [ARGS] [--server http://HOST:PORT] [--token TOKEN | --key KEY --secret SECRET] [--json]
                           [--trust-cert FILE.pem]
        commands:
          rooms [--owner USER]                    rooms, with live member counts
          room ROOM                               one room: settings, seats, members, pending requests
          create ROOM [--title T] [--seats N] [--mode free|request] [--owner USER]
          end ROOM                                end the room; everyone in it is let go
          kick ROOM USER [--ban SECONDS]          remove a member (and keep them out for a while)
          unban ROOM USER
          bans ROOM
          mute-all ROOM [--off] [--members-may-unmute]
          say ROOM TEXT [--as ID[:NAME]]          post a message as the system (or as a bot user)
          revoke USER [--reason TEXT]             sign the user out on every device and node; tokens issued
                                                  until now are refused (the app's backend issues new ones)
          webhooks [--state pending|delivered|failed] [--room ROOM]
          replay EVENT                            post a webhook event again
          packs [list]                            the resource packs' catalogue (docs/protocol.md section 19)
          packs add FILE.zip                      upload a pack: checked, named by its SHA-256, and current for its id
          packs retire ID                         take a pack out of the catalogue (its versions are served 30 more days)
          gifts ROOM [--day YYYY-MM-DD] [--limit N]
                                                  the room's top givers and receivers of gifts (of that UTC day)
          logs USER [--minutes N] [--reason TEXT] [--wait SECONDS] [--out FILE]
                                                  ask the user's client for its log of the last N minutes (60); wait
                                                  (30 s) for it and print it or write it to FILE. A client not connected
                                                  sends it when it next connects: then `log ID` fetches it
          log ID [--out FILE]                     a log asked for: print it once it is delivered, or say where it stands
          nodes                                   the cluster's live nodes, their addresses and load
          drain NODE [--no-wait]                  move the node's rooms and members to other nodes; it takes no
                                                  new rooms (until restarted). Waits until it hosts none (60 s at most)
        --server defaults to http://127.0.0.1:7880. The token needs the admin grant; without --token, one is
        minted for user "admin" from --key and --secret, or from the development key in --data (default
        ./majlis-data) when the server runs in development mode. --json prints the API's answer as it came.
        --trust-cert trusts an https server holding exactly that certificate (a development server's self-signed one).
        Flags may also be set as MAJLIS_<FLAG> (MAJLIS_SERVER, MAJLIS_TOKEN, ...). Exit status 1 with the
        server's error on a failure.
        """

    static func run(_ arguments: [String]) throws -> Int32 {
        var args = try Arguments(arguments, switches: ["json", "off", "members-may-unmute", "no-wait"])
        if args.wantsHelp {
            say(help)
            return 0
        }
        if args.positional.isEmpty {
            complain(help)
            return 2
        }
        let server = args.string("server", default: "http://127.0.0.1:7880").trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        guard let base = URL(string: server), ["http", "https"].contains(base.scheme ?? "") else {
            throw Arguments.Failure(description: "--server must be an http:// or https:// address, like http://127.0.0.1:7880")
        }
        let token = try self.token(&args)
        let json = args.flag("json")
        var words = args.positional
        let command = words.removeFirst()
        func need(_ count: Int, _ names: String) throws {
            guard words.count == count else { throw Arguments.Failure(description: "usage: majlis admin \(command) \(names)") }
        }
        func path(_ parts: String...) -> String { "/v1/" + parts.map { $0.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(["/"])) ?? $0 }.joined(separator: "/") }
        let client = try AdminClient(server: server, token: token, trusting: args.string("trust-cert"))
        let answer: JSONValue
        switch command {
        case "rooms":
            try need(0, "[--owner USER]")
            var query = "?limit=200"
            if let owner = args.string("owner") { query += "&owner=" + (owner.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed) ?? owner) }
            try args.rejectUnknown()
            answer = try client.call("GET", "/v1/rooms" + query)
            if !json {
                let rooms = answer["rooms"]?.arrayValue ?? []
                say(rooms.isEmpty ? "no rooms" : table(rooms.map { room in
                    [room["id"]?.stringValue ?? "", "\(room["memberCount"]?.intValue ?? 0) in", room["mode"]?.stringValue ?? "", "owner " + (room["owner"]?.stringValue ?? ""), room["title"]?.stringValue ?? ""]
                }))
            }
        case "room":
            try need(1, "ROOM")
            try args.rejectUnknown()
            answer = try client.call("GET", path("rooms", words[0]))
            if !json { say(describe(room: answer)) }
        case "create":
            try need(1, "ROOM [--title T] [--seats N] [--mode free|request] [--owner USER]")
            var body: [String: JSONValue] = ["id": .string(words[0])]
            if let title = args.string("title") { body["title"] = .string(title) }
            if args.string("seats") != nil { body["seatCount"] = .int(Int64(try args.int("seats", default: 8, range: 1...64))) }
            if let mode = args.string("mode") { body["mode"] = .string(mode) }
            if let owner = args.string("owner") { body["owner"] = .string(owner) }
            try args.rejectUnknown()
            answer = try client.call("POST", "/v1/rooms", body: .object(body))
            if !json { say("created room \(words[0]) (\(answer["seatCount"]?.intValue ?? 0) seats, \(answer["mode"]?.stringValue ?? ""), owner \(answer["owner"]?.stringValue ?? ""))") }
        case "end":
            try need(1, "ROOM")
            try args.rejectUnknown()
            answer = try client.call("DELETE", path("rooms", words[0]))
            if !json { say("ended room \(words[0])") }
        case "kick":
            try need(2, "ROOM USER [--ban SECONDS]")
            let ban = try args.int("ban", default: 0, range: 0...(10 * 365 * 86_400))
            try args.rejectUnknown()
            answer = try client.call("POST", path("rooms", words[0], "members", words[1], "kick"), body: ["banSeconds": .int(Int64(ban))])
            if !json {
                let until = answer["until"]?.intValue.map { " (until \(utc($0)))" } ?? ""
                say(answer["removed"] == false
                    ? "\(words[1]) is not in \(words[0]); banned from it for \(ban) s\(until)"
                    : "removed \(words[1]) from \(words[0])" + (ban > 0 ? ", banned for \(ban) s\(until)" : ""))
            }
        case "revoke":
            try need(1, "USER [--reason TEXT]")
            let reason = args.string("reason")
            try args.rejectUnknown()
            answer = try client.call("POST", path("users", words[0], "sessions", "revoke"), body: reason.map { ["reason": .string($0)] } ?? [:])
            if !json {
                say("signed \(words[0]) out everywhere (sessions ended on this node: \(answer["ended"]?.intValue ?? 0)); tokens issued until now are refused")
            }
        case "unban":
            try need(2, "ROOM USER")
            try args.rejectUnknown()
            answer = try client.call("DELETE", path("rooms", words[0], "bans", words[1]))
            if answer["lifted"] == false { throw Arguments.Failure(description: "\(words[1]) is not banned from \(words[0])") }
            if !json { say("lifted the ban: \(words[1]) may come back to \(words[0])") }
        case "bans":
            try need(1, "ROOM")
            try args.rejectUnknown()
            answer = try client.call("GET", path("rooms", words[0], "bans"))
            if !json {
                let bans = answer["bans"]?.arrayValue ?? []
                say(bans.isEmpty ? "no bans in \(words[0])" : table(bans.map { [$0["user"]?.stringValue ?? "", "until " + utc($0["until"]?.intValue ?? 0)] }))
            }
        case "mute-all":
            try need(1, "ROOM [--off] [--members-may-unmute]")
            let muted = !args.flag("off")
            let soft = args.flag("members-may-unmute")
            try args.rejectUnknown()
            answer = try client.call("POST", path("rooms", words[0], "mute-all"), body: ["muted": .bool(muted), "membersMayUnmute": .bool(soft)])
            if !json { say(!muted ? "every seat of \(words[0]) unmuted" : soft ? "every mic in \(words[0]) turned off (members may turn theirs on)" : "every seat of \(words[0]) muted") }
        case "say":
            try need(2, "ROOM TEXT [--as ID[:NAME]]")
            var body: [String: JSONValue] = ["text": .string(words[1])]
            if let sender = args.string("as") {
                let parts = sender.split(separator: ":", maxSplits: 1).map(String.init)
                body["from"] = parts.count == 2 ? ["id": .string(parts[0]), "name": .string(parts[1])] : ["id": .string(sender)]
            }
            try args.rejectUnknown()
            answer = try client.call("POST", path("rooms", words[0], "chat"), body: .object(body))
            if !json { say("posted message \(answer["msgId"]?.intValue ?? 0) in \(words[0])") }
        case "webhooks":
            try need(0, "[--state pending|delivered|failed] [--room ROOM]")
            var query = "?limit=500"
            if let state = args.string("state") { query += "&state=" + state }
            if let room = args.string("room") { query += "&room=" + (room.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed) ?? room) }
            try args.rejectUnknown()
            answer = try client.call("GET", "/v1/webhooks/events" + query)
            if !json {
                let events = answer["events"]?.arrayValue ?? []
                let rows = events.map { event -> [String] in
                    [event["id"]?.stringValue ?? "", event["room"]?.stringValue ?? "", "#\(event["seq"]?.intValue ?? 0)", event["type"]?.stringValue ?? "",
                     event["state"]?.stringValue ?? "", "\(event["attempts"]?.intValue ?? 0) tries", event["lastError"]?.stringValue ?? ""]
                }
                say((rows.isEmpty ? "no webhook events" : table(rows)) + "\n\(answer["queueDepth"]?.intValue ?? 0) pending")
            }
        case "replay":
            try need(1, "EVENT")
            try args.rejectUnknown()
            answer = try client.call("POST", path("webhooks", "events", words[0], "replay"))
            if !json { say("event \(words[0]) will be posted again") }
        case "packs":
            let action = words.first ?? "list"
            try args.rejectUnknown()
            switch action {
            case "list":
                try need(words.isEmpty ? 0 : 1, "[list]")
                answer = try client.call("GET", "/v1/packs")
                if !json {
                    let rows = (answer["packs"]?.arrayValue ?? []).map { pack -> [String] in
                        [pack["id"]?.stringValue ?? "", pack["kind"]?.stringValue ?? "", "\(pack["items"]?.arrayValue?.count ?? 0) items",
                            "\(pack["size"]?.intValue ?? 0) bytes", pack["sha256"]?.stringValue ?? ""]
                    }
                    say(rows.isEmpty ? "no packs" : table(rows))
                }
            case "add":
                try need(2, "add FILE.zip")
                guard let bytes = FileManager.default.contents(atPath: words[1]) else { throw Arguments.Failure(description: "cannot read \(words[1])") }
                answer = try client.call("POST", "/v1/packs", bytes: Array(bytes), type: "application/zip")
                if !json { say("pack \(answer["pack"]?["id"]?.stringValue ?? "") is current: \(answer["pack"]?["sha256"]?.stringValue ?? "")") }
            case "retire":
                try need(2, "retire ID")
                answer = try client.call("DELETE", path("packs", words[1]))
                if !json { say("pack \(words[1]) is out of the catalogue; its versions are served 30 more days") }
            default:
                throw Arguments.Failure(description: "usage: majlis admin packs [list | add FILE.zip | retire ID]")
            }
        case "gifts":
            try need(1, "ROOM [--day YYYY-MM-DD] [--limit N]")
            var query: [String] = []
            if let day = args.string("day") { query.append("day=" + (day.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed) ?? day)) }
            if let limit = args.string("limit") { query.append("limit=" + (limit.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? limit)) }
            try args.rejectUnknown()
            answer = try client.call("GET", path("rooms", words[0], "gifts", "leaders") + (query.isEmpty ? "" : "?" + query.joined(separator: "&")))
            if !json {
                let rows = { (side: String, title: String) -> [[String]] in
                    (answer[side]?.arrayValue ?? []).enumerated().map { [$0.offset == 0 ? title : "", $0.element["user"]?.stringValue ?? "", "\($0.element["count"]?.intValue ?? 0)"] }
                }
                let all = rows("givers", "gave") + rows("receivers", "received")
                say(all.isEmpty ? "no gifts in \(words[0])" : table(all))
            }
        case "logs":
            try need(1, "USER [--minutes N] [--reason TEXT] [--wait SECONDS] [--out FILE]")
            let minutes = try args.int("minutes", default: 60, range: 1...10_080)
            let wait = try args.int("wait", default: 30, range: 0...3_600)
            var body: [String: JSONValue] = ["minutes": .int(Int64(minutes))]
            if let reason = args.string("reason") { body["reason"] = .string(reason) }
            let out = args.string("out")
            try args.rejectUnknown()
            answer = try client.call("POST", path("users", words[0], "logs"), body: .object(body))
            let id = answer["request"]?["id"]?.stringValue ?? ""
            let started = Date()
            var delivered = false
            while !delivered && Date().timeIntervalSince(started) < Double(wait) {
                Thread.sleep(forTimeInterval: 0.25)
                delivered = try client.call("GET", path("logs", id))["request"]?["state"] == "delivered"
            }
            if delivered {
                try Self.write(try client.read(path("logs", id, "content")), to: out, id: id)
            } else if !json {
                say("asked \(words[0])'s client for log \(id); it has not sent it yet (a client sends it when it next connects): majlis admin log \(id)")
            }
        case "log":
            try need(1, "ID [--out FILE]")
            let out = args.string("out")
            try args.rejectUnknown()
            answer = try client.call("GET", path("logs", words[0]))
            if answer["request"]?["state"] == "delivered" {
                try Self.write(try client.read(path("logs", words[0], "content")), to: out, id: words[0])
            } else if !json {
                say("log \(words[0]) of \(answer["request"]?["user"]?.stringValue ?? ""): asked, not delivered yet")
            }
        case "nodes":
            try need(0, "")
            try args.rejectUnknown()
            answer = try client.call("GET", "/v1/nodes")
            if !json {
                let rows = (answer["nodes"]?.arrayValue ?? []).map { node -> [String] in
                    let cpu = node["cpu"]?.doubleValue ?? 0
                    return [node["id"]?.stringValue ?? "", node["state"]?.stringValue ?? "", "\(node["rooms"]?.intValue ?? 0) rooms",
                        "\(node["members"]?.intValue ?? 0) members", "\(Int((node["packetsPerSecond"]?.doubleValue ?? 0).rounded())) packets/s",
                        "cpu \(Int((cpu * 100).rounded()))%", node["signaling"]?.stringValue ?? "", "media " + (node["media"]?.stringValue ?? "")]
                }
                say(rows.isEmpty ? "no live nodes" : table(rows))
            }
        case "drain":
            try need(1, "NODE")
            let wait = !args.flag("no-wait")
            try args.rejectUnknown()
            answer = try client.call("POST", path("nodes", words[0], "drain"))
            guard wait else {
                if !json { say("node \(words[0]) drains") }
                break
            }
            let started = Date()
            var left = -1
            while Date().timeIntervalSince(started) < 60 {
                let nodes = try client.call("GET", "/v1/nodes")["nodes"]?.arrayValue ?? []
                guard let node = nodes.first(where: { $0["id"]?.stringValue == words[0] }) else {
                    left = 0  // gone: stopped after draining
                    break
                }
                left = node["state"] == "draining" ? Int(node["rooms"]?.intValue ?? 0) : -1
                if left == 0 { break }
                Thread.sleep(forTimeInterval: 0.5)
            }
            guard left == 0 else {
                throw Arguments.Failure(
                    description: "node \(words[0]) still hosts \(max(left, 0)) rooms after 60 s: is another node active to take them? (majlis admin nodes)")
            }
            if !json { say("node \(words[0]) is drained: it hosts no rooms (\(String(format: "%.1f", Date().timeIntervalSince(started))) s)") }
        default:
            throw Arguments.Failure(description: "unknown admin command '\(command)'\n\(help)")
        }
        if json { say(String(decoding: (try? JSONEncoder().encode(answer)) ?? Data(), as: UTF8.self)) }
        return 0
    }

    /// A delivered log: to `file`, or printed.
    private static func write(_ log: Data, to file: String?, id: String) throws {
        guard let file else {
            FileHandle.standardOutput.write(log)
            return
        }
        guard FileManager.default.createFile(atPath: file, contents: log) else { throw Arguments.Failure(description: "cannot write \(file)") }
        complain("log \(id): \(log.count) bytes written to \(file)")
    }

    /// The bearer token: given, minted from a key, or from the development key in --data.
    private static func token(_ args: inout Arguments) throws -> String {
        if let token = args.string("token") { return token }
        let key = args.string("key")
        let secret = args.string("secret")
        let data = args.string("data", default: "./majlis-data")
        let grants = Grants(join: false, create: true, admin: true, publish: false, chat: true)
        if let key, let secret { return TokenCommand.mint(key: key, secret: secret, user: "admin", name: "Admin", room: nil, grants: grants, ttl: 300) }
        if key != nil || secret != nil { throw Arguments.Failure(description: "--key and --secret go together") }
        let file = (data as NSString).appendingPathComponent(DevelopmentSecret.fileName)
        guard let secret = try? String(contentsOfFile: file, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines), !secret.isEmpty else {
            throw Arguments.Failure(description: "give --token, or --key and --secret (an API key of the server), or --data of a development server")
        }
        return TokenCommand.mint(key: DevelopmentSecret.key, secret: secret, user: "admin", name: "Admin", room: nil, grants: grants, ttl: 300)
    }

    /// Rows as columns padded to their widest cell.
    static func table(_ rows: [[String]]) -> String {
        let widths = (0..<(rows.map(\.count).max() ?? 0)).map { column in rows.map { column < $0.count ? DisplayWidth.columns($0[column]) : 0 }.max() ?? 0 }
        return rows.map { row in
            row.enumerated().map { index, cell in
                index == row.count - 1 ? cell : cell + String(repeating: " ", count: widths[index] - DisplayWidth.columns(cell))
            }.joined(separator: "  ").trimmingCharacters(in: .whitespaces)
        }.joined(separator: "\n")
    }

    static func describe(room: JSONValue) -> String {
        let info = room["room"] ?? .null
        let members = room["members"]?.arrayValue ?? []
        var names: [String: String] = [:]
        for member in members { if let id = member["id"]?.stringValue { names[id] = member["name"]?.stringValue } }
        /// "Name (id)", or the id alone when the name is the id or unknown.
        func person(_ id: String) -> String { names[id].map { $0 == id ? id : "\($0) (\(id))" } ?? id }
        let owner = info["owner"]?.stringValue ?? ""
        var lines = [
            "\(info["id"]?.stringValue ?? "") \"\(info["title"]?.stringValue ?? "")\": \(info["mode"]?.stringValue ?? "") mode, owner "
                + (names[owner] != nil ? person(owner) : "\(owner) (not in the room)") + ", \(info["memberCount"]?.intValue ?? 0) members"
                + (info["chatMutedAll"] == true ? ", chat muted" : "")
        ]
        for seat in room["seats"]?.arrayValue ?? [] {
            let index = (seat["index"]?.intValue ?? 0) + 1
            var text = "  seat \(index): " + (seat["state"] == "locked" ? "locked" : seat["user"]?.stringValue.map(person) ?? "empty")
            if seat["muted"] == true { text += " (muted)" }
            lines.append(text)
        }
        if !members.isEmpty {
            lines.append("  members: " + members.map { member in
                let role = member["role"]?.stringValue ?? "member"
                return person(member["id"]?.stringValue ?? "") + (role == "member" ? "" : " [\(role)]")
            }.joined(separator: ", "))
        }
        for request in room["requests"]?.arrayValue ?? [] {
            lines.append("  asks to speak: \(person(request["user"]?.stringValue ?? "")) (request \(request["id"]?.stringValue ?? ""))")
        }
        return lines.joined(separator: "\n")
    }

    static func utc(_ milliseconds: Int64) -> String {
        let formatter = DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss 'UTC'"
        return formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
    }
}
