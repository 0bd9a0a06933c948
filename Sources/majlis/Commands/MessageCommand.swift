import Foundation
import MajlisCommandLine
import MajlisKit
import MajlisProtocol

/// `majlis message`: conversations from a terminal or a script (docs/protocol.md section 17):
/// send (text, cards and files), list, sync, search, make a group, and follow what arrives. Prints
/// JSON, one object a line.
enum MessageCommand {
    static let help = """
        usage: majlis message --url ws://HOST:PORT/v1/signal --token TOKEN [--device ID] [--trust-cert FILE.pem] [--state FILE] COMMAND
          send (--to USER | --conversation ID) (--text TEXT | --type TYPE --fallback TEXT [--payload JSON] [--text TEXT])
               [--reply-to SEQ] [--client-id ID]      posts a message; prints {conversation, seq, ts}
          send (--to USER | --conversation ID) --file PATH [--mime TYPE] [--thumbnail IMAGE] [--width N --height N]
               [--duration MS] [--text TEXT] [--client-id ID]
                                                       uploads the file (resumable, docs/protocol.md section 18) and sends
                                                       it as an image, voice or video message (by its type: --mime, else
                                                       its extension); prints {conversation, seq, ts, media}
          resume                                       sends what the --state file holds unsent (a send that was killed or
                                                       cut off: its upload goes on from where the server stands, and the
                                                       message posts once); prints each as send does
          download --media ID [--out FILE] [--range A-B]
                                                       writes a media message's file (bytes A to B) to FILE or stdout
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
          presence (--users USER,USER | --share contacts|nobody)
                                                       prints whether each user who is a contact is online
                                                       ({user, online, lastSeen?, hidden?}), or sets who sees
                                                       the user's own presence (prints {share})
          follow [--duration SECONDS]                  prints every messaging event (msg.new, msg.updated, msg.read,
                                                       msg.typing, msg.rejected, conv.updated, conv.removed, conv.request,
                                                       conv.declined, presence.changed) as it comes, until
                                                       interrupted or --duration passes
        The conversations of the token's user. --device names this client's device (another device of the
        user stays connected beside it). --client-id makes a retried send post once (default: a new id).
        --state FILE keeps what `send` has not finished sending (the SDK's store of a device): a send killed
        mid-upload is finished by `resume` with the same --state.
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
        let statePath = args.string("state")
        guard let command = args.positional.first, args.positional.count == 1 else {
            throw Arguments.Failure(
                description: "say one command: send, resume, download, list, sync, read, search, create, discover, join, presence or follow (see majlis message --help)")
        }
        if command == "resume" && statePath == nil { throw Arguments.Failure(description: "resume: --state FILE is required (the file send kept)") }
        let work = try self.work(command, &args)
        try args.rejectUnknown()
        let chosen = options
        return try runBlocking {
            let signaling = LiveSignalingClient(url: url, token: token, options: chosen)
            do {
                _ = try await signaling.connect()
                let messenger = Messenger(
                    signaling: signaling, store: statePath.map { FileMessengerStore(path: $0) }, transfer: HTTPMediaTransfer(signaling: signaling))
                try await work(Context(signaling: signaling, messenger: messenger))
                await signaling.disconnect()
                return 0
            } catch {
                await signaling.disconnect()
                throw Arguments.Failure(description: "\(command): \(error)")
            }
        }
    }

    /// What a command works with: the connection, and the user's conversations on it.
    struct Context: Sendable {
        var signaling: LiveSignalingClient
        var messenger: Messenger
    }

    /// What `command` does, its flags read now (so that a wrong one fails before connecting).
    private static func work(_ command: String, _ args: inout Arguments) throws -> @Sendable (Context) async throws -> Void {
        switch command {
        case "send":
            let to = args.string("to")
            let conversation = args.string("conversation")
            guard (to == nil) != (conversation == nil) else { throw Arguments.Failure(description: "send: give --to USER or --conversation ID") }
            let target: MessageTarget = to.map(MessageTarget.user) ?? .conversation(conversation!)
            let clientMsgId = args.string("client-id") ?? "cli-" + UUID().uuidString.prefix(18).lowercased()
            if let file = args.string("file") { return try sendFile(file, to: target, clientMsgId: clientMsgId, &args) }
            var payload: JSONValue?
            if let text = args.string("payload") {
                guard let parsed = try? JSONParser().parse(Data(text.utf8)) else { throw Arguments.Failure(description: "--payload is not JSON: \(text)") }
                payload = parsed
            }
            let replyTo = args.string("reply-to").map { Int64($0) }
            if let replyTo, replyTo == nil { throw Arguments.Failure(description: "--reply-to must be a message's seq") }
            let draft = MessageDraft(
                type: args.string("type", default: "text"), text: args.string("text"), payload: payload, fallback: args.string("fallback"),
                replyTo: replyTo ?? nil, clientMsgId: clientMsgId)
            return { context in try await printRequest(context.signaling, .send(target, draft)) }
        case "resume":
            return { context in
                // Start sends what is pending (when the file is this user's), then lists and syncs.
                let messenger = context.messenger
                let unsent = Set(await messenger.state.pending.map(\.id))
                try await messenger.start()
                await messenger.stop()
                let state = await messenger.state
                for message in state.messages.values.joined() where unsent.contains(message.clientMsgId) { printSent(message) }
                for pending in state.pending where unsent.contains(pending.id) {
                    switch pending.status {
                    case .sending, .failed(_): throw Arguments.Failure(description: "\(pending.id) is not sent: \(pending.status)")
                    case .held(let id): say(#"{"held":"\#(id)"}"#)
                    case .rejected(let reason): throw Arguments.Failure(description: "\(pending.id) was rejected: \(reason)")
                    }
                }
            }
        case "download":
            guard let media = args.string("media") else { throw Arguments.Failure(description: "download: --media is required") }
            let out = args.string("out")
            var range: Range<Int64>?
            if let text = args.string("range") {
                let bounds = text.split(separator: "-", omittingEmptySubsequences: false).map { Int64($0) }
                guard bounds.count == 2, let first = bounds[0], let last = bounds[1], first <= last else {
                    throw Arguments.Failure(description: "--range is FIRST-LAST, bytes counted from 0: \(text)")
                }
                range = first..<last + 1
            }
            let asked = range
            return { context in
                let data = try await context.messenger.download(media, range: asked)
                if let out {
                    guard FileManager.default.createFile(atPath: out, contents: data) else { throw Arguments.Failure(description: "cannot write \(out)") }
                } else {
                    FileHandle.standardOutput.write(data)
                }
            }
        case "list":
            return { context in
                let signaling = context.signaling
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
            return { context in
                var after = start
                var more = true
                while more {
                    let page = try await request(context.signaling, .sync(conversation: conversation, after: after, limit: 200))
                    let messages = page["messages"]?.arrayValue ?? []
                    messages.forEach(printLine)
                    after = messages.last?["seq"]?.intValue ?? after
                    more = page["more"] == true
                }
            }
        case "read":
            guard let conversation = args.string("conversation") else { throw Arguments.Failure(description: "read: --conversation is required") }
            let seq = Int64(try args.int("seq", default: 0))
            return { context in try await printRequest(context.signaling, .read(conversation: conversation, seq: seq)) }
        case "search":
            guard let query = args.string("query") else { throw Arguments.Failure(description: "search: --query is required") }
            let conversation = args.string("conversation")
            let limit = try args.int("limit", default: 20, range: 1...10_000)
            return { context in
                var cursor: String?, printed = 0
                repeat {
                    let page = try await request(context.signaling, .search(query: query, conversation: conversation, cursor: cursor, limit: min(50, limit - printed)))
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
            return { context in try await printRequest(context.signaling, .createGroup(title: title, members: members, access: access, about: about)) }
        case "discover":
            let query = args.string("query")
            return { context in
                var cursor: String?
                repeat {
                    let page = try await request(context.signaling, .discover(query: query, cursor: cursor, limit: 50))
                    (page["groups"]?.arrayValue ?? []).forEach(printLine)
                    cursor = page["next"]?.stringValue
                } while cursor != nil
            }
        case "join":
            guard let conversation = args.string("conversation") else { throw Arguments.Failure(description: "join: --conversation is required") }
            let note = args.string("note")
            return { context in try await printRequest(context.signaling, .join(conversation: conversation, note: note)) }
        case "presence":
            if let share = args.string("share") {
                guard let sharing = PresenceSharing(rawValue: share) else { throw Arguments.Failure(description: "--share must be contacts or nobody") }
                return { context in try await printRequest(context.signaling, .sharePresence(sharing)) }
            }
            guard let users = args.string("users")?.split(separator: ",").map(String.init), !users.isEmpty else {
                throw Arguments.Failure(description: "presence: --users or --share is required")
            }
            return { context in (try await request(context.signaling, .presence(users: users))["presence"]?.arrayValue ?? []).forEach(printLine) }
        case "follow":
            let duration = try args.int("duration", default: 0, range: 0...31_536_000)
            return { context in try await follow(context.signaling, seconds: duration) }
        default:
            throw Arguments.Failure(
                description: "unknown command '\(command)': send, resume, download, list, sync, read, search, create, discover, join, presence or follow")
        }
    }

    /// `send --file`: the file uploaded and sent as an image, voice or video message.
    private static func sendFile(_ file: String, to target: MessageTarget, clientMsgId: String, _ args: inout Arguments) throws -> @Sendable (Context) async throws -> Void {
        guard let mime = args.string("mime") ?? mimeType(of: file) else {
            throw Arguments.Failure(description: "send: the type of \(file) is not known by its extension: give --mime (image/png, audio/ogg, video/mp4, ...)")
        }
        var thumbnail: (file: String, type: String)?
        if let image = args.string("thumbnail") {
            guard let type = mimeType(of: image), type.hasPrefix("image/") else { throw Arguments.Failure(description: "--thumbnail must be a jpg, png, gif or webp image") }
            thumbnail = (image, type)
        }
        var details: [String: JSONValue] = [:]
        for name in ["width", "height", "duration"] {
            if let value = args.string(name) {
                guard let number = Int64(value), number > 0 else { throw Arguments.Failure(description: "--\(name) must be a positive whole number") }
                details[name] = .int(number)
            }
        }
        let text = args.string("text")
        let chosen = (details, thumbnail)
        return { context in
            let sent = try await context.messenger.send(
                file: file, type: mime, to: target, thumbnail: chosen.1, details: chosen.0, text: text, clientMsgId: clientMsgId)
            if let sent { printSent(sent) } else { say(#"{"held":true}"#) }
        }
    }

    /// A media file's MIME type by its extension (those docs/protocol.md section 18 takes).
    static func mimeType(of file: String) -> String? {
        let types = [
            "jpg": "image/jpeg", "jpeg": "image/jpeg", "png": "image/png", "gif": "image/gif", "webp": "image/webp", "ogg": "audio/ogg", "opus": "audio/ogg",
            "oga": "audio/ogg", "weba": "audio/webm", "m4a": "audio/mp4", "mp3": "audio/mpeg", "aac": "audio/aac", "wav": "audio/wav", "mp4": "video/mp4",
            "webm": "video/webm", "mov": "video/quicktime",
        ]
        return types[URL(fileURLWithPath: file).pathExtension.lowercased()]
    }

    /// A sent message as `send` prints it: where it went, and the file it carries.
    private static func printSent(_ message: ConversationMessage) {
        var line: [String: JSONValue] = ["conversation": .string(message.conversation), "seq": .int(message.seq), "ts": .int(message.ts)]
        if let media = message.payload?["media"] { line["media"] = media }
        if let thumbnail = message.payload?["thumbnail"] { line["thumbnail"] = thumbnail }
        printLine(.object(line))
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
                        .joinDeclined, .presenceChanged:
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
