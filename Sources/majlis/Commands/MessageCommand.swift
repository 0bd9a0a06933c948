import Foundation
import MajlisCommandLine
import MajlisKit
import MajlisProtocol

/// `majlis message`: conversations from a terminal or a script (docs/protocol.md section 17):
/// send, list, sync, search, make a group, and follow what arrives. Prints JSON, one object a line.
enum MessageCommand {
    static let help = """
        usage: majlis message --url ws://HOST:PORT/v1/signal --token TOKEN [--device ID] [--trust-cert FILE.pem] COMMAND
          send (--to USER | --conversation ID) (--text TEXT | --type TYPE --fallback TEXT [--payload JSON] [--text TEXT])
               [--reply-to SEQ] [--client-id ID]      posts a message; prints {conversation, seq, ts}
          list                                         prints each conversation of the user (ConversationSummary)
          sync --conversation ID [--after SEQ]         prints each message after SEQ (default 0), oldest first
          read --conversation ID --seq SEQ             marks the conversation read up to SEQ
          search --query WORDS [--conversation ID] [--limit N]
                                                       prints each message with every word, newest first (at most N,
                                                       default 20)
          create --title TITLE [--members USER,USER] [--access private|open|request] [--about TEXT]
                                                       makes a group (open, request: a public group); prints it
          discover [--query WORDS]                     prints each public group (with every word), the largest first
          join --conversation ID [--note TEXT]         joins a public group, or asks to
          follow [--duration SECONDS]                  prints every messaging event (msg.new, msg.updated, msg.read,
                                                       msg.typing, msg.rejected, conv.updated, conv.removed, conv.request,
                                                       conv.declined) as it comes, until
                                                       interrupted or --duration passes
        The conversations of the token's user. --device names this client's device (another device of the
        user stays connected beside it). --client-id makes a retried send post once (default: a new id).
        """

    static func run(_ arguments: [String]) throws -> Int32 {
        var args = try Arguments(arguments)
        if args.wantsHelp {
            say(help)
            return 0
        }
        guard let url = args.string("url"), let token = args.string("token") else {
            throw Arguments.Failure(description: "--url and --token are required (see majlis message --help)")
        }
        var options = LiveSignalingClient.Options()
        options.device = args.string("device")
        options.trustedCertificate = args.string("trust-cert")
        guard let command = args.positional.first, args.positional.count == 1 else {
            throw Arguments.Failure(description: "say one command: send, list, sync, read, search, create, discover, join or follow (see majlis message --help)")
        }
        let work = try self.work(command, &args)
        try args.rejectUnknown()
        let chosen = options
        return try runBlocking {
            let signaling = LiveSignalingClient(url: url, token: token, options: chosen)
            do {
                _ = try await signaling.connect()
                try await work(signaling)
                await signaling.disconnect()
                return 0
            } catch {
                await signaling.disconnect()
                throw Arguments.Failure(description: "\(command): \(error)")
            }
        }
    }

    /// What `command` does, its flags read now (so that a wrong one fails before connecting).
    private static func work(_ command: String, _ args: inout Arguments) throws -> @Sendable (LiveSignalingClient) async throws -> Void {
        switch command {
        case "send":
            let to = args.string("to")
            let conversation = args.string("conversation")
            guard (to == nil) != (conversation == nil) else { throw Arguments.Failure(description: "send: give --to USER or --conversation ID") }
            var payload: JSONValue?
            if let text = args.string("payload") {
                guard let parsed = try? JSONParser().parse(Data(text.utf8)) else { throw Arguments.Failure(description: "--payload is not JSON: \(text)") }
                payload = parsed
            }
            let replyTo = args.string("reply-to").map { Int64($0) }
            if let replyTo, replyTo == nil { throw Arguments.Failure(description: "--reply-to must be a message's seq") }
            let draft = MessageDraft(
                type: args.string("type", default: "text"), text: args.string("text"), payload: payload, fallback: args.string("fallback"),
                replyTo: replyTo ?? nil, clientMsgId: args.string("client-id") ?? "cli-" + UUID().uuidString.prefix(18).lowercased())
            let target: MessageTarget = to.map(MessageTarget.user) ?? .conversation(conversation!)
            return { signaling in try await printRequest(signaling, .send(target, draft)) }
        case "list":
            return { signaling in
                var after: String?
                repeat {
                    let page = try await request(signaling, .list(after: after, limit: 200))
                    let entries = page["conversations"]?.arrayValue ?? []
                    entries.forEach(printLine)
                    after = page["more"] == true ? entries.last?["id"]?.stringValue : nil
                } while after != nil
            }
        case "sync":
            guard let conversation = args.string("conversation") else { throw Arguments.Failure(description: "sync: --conversation is required") }
            let start = Int64(try args.int("after", default: 0))
            return { signaling in
                var after = start
                var more = true
                while more {
                    let page = try await request(signaling, .sync(conversation: conversation, after: after, limit: 200))
                    let messages = page["messages"]?.arrayValue ?? []
                    messages.forEach(printLine)
                    after = messages.last?["seq"]?.intValue ?? after
                    more = page["more"] == true
                }
            }
        case "read":
            guard let conversation = args.string("conversation") else { throw Arguments.Failure(description: "read: --conversation is required") }
            let seq = Int64(try args.int("seq", default: 0))
            return { signaling in try await printRequest(signaling, .read(conversation: conversation, seq: seq)) }
        case "search":
            guard let query = args.string("query") else { throw Arguments.Failure(description: "search: --query is required") }
            let conversation = args.string("conversation")
            let limit = try args.int("limit", default: 20, range: 1...10_000)
            return { signaling in
                var cursor: String?, printed = 0
                repeat {
                    let page = try await request(signaling, .search(query: query, conversation: conversation, cursor: cursor, limit: min(50, limit - printed)))
                    let messages = page["messages"]?.arrayValue ?? []
                    messages.forEach(printLine)
                    printed += messages.count
                    cursor = page["next"]?.stringValue
                } while cursor != nil && printed < limit
            }
        case "create":
            guard let title = args.string("title") else { throw Arguments.Failure(description: "create: --title is required") }
            let members = args.string("members").map { $0.split(separator: ",").map(String.init) } ?? []
            let accessName = args.string("access", default: "private")
            guard let access = GroupAccess(rawValue: accessName) else { throw Arguments.Failure(description: "--access must be private, open or request") }
            let about = args.string("about")
            return { signaling in try await printRequest(signaling, .createGroup(title: title, members: members, access: access, about: about)) }
        case "discover":
            let query = args.string("query")
            return { signaling in
                var cursor: String?
                repeat {
                    let page = try await request(signaling, .discover(query: query, cursor: cursor, limit: 50))
                    (page["groups"]?.arrayValue ?? []).forEach(printLine)
                    cursor = page["next"]?.stringValue
                } while cursor != nil
            }
        case "join":
            guard let conversation = args.string("conversation") else { throw Arguments.Failure(description: "join: --conversation is required") }
            let note = args.string("note")
            return { signaling in try await printRequest(signaling, .join(conversation: conversation, note: note)) }
        case "follow":
            let duration = try args.int("duration", default: 0, range: 0...31_536_000)
            return { signaling in try await follow(signaling, seconds: duration) }
        default:
            throw Arguments.Failure(description: "unknown command '\(command)': send, list, sync, read, search, create, discover, join or follow")
        }
    }

    private static func request(_ signaling: LiveSignalingClient, _ command: MessagingCommand) async throws -> JSONValue {
        let (op, args) = RequestEncoder.request(command)
        return try await signaling.request(op, args)
    }

    private static func printRequest(_ signaling: LiveSignalingClient, _ command: MessagingCommand) async throws {
        printLine(try await request(signaling, command))
    }

    /// Prints the messaging events as they come: `{"ev", "data"}` a line.
    private static func follow(_ signaling: LiveSignalingClient, seconds: Int) async throws {
        let events = signaling.subscribe()
        say(#"{"following":true}"#)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for await event in events {
                    guard case .event(let frame) = event, frame.room == nil else { continue }
                    guard let encoded = try? JSONEncoder().encode(frame), let value = try? JSONParser().parse(encoded) else { continue }
                    switch frame.event {
                    case .messageNew, .messageUpdated, .messageRead, .typing, .messageRejected, .conversationUpdated, .conversationRemoved, .joinRequested,
                        .joinDeclined:
                        printLine(value)
                    default: continue
                    }
                }
            }
            if seconds > 0 {
                group.addTask { try await Task.sleep(for: .seconds(seconds)) }
                try await group.next()
                group.cancelAll()
            } else {
                try await group.waitForAll()
            }
        }
    }

    private static func printLine(_ value: JSONValue) {
        guard let data = try? JSONEncoder().encode(value) else { return }
        say(String(decoding: data, as: UTF8.self))
    }
}
