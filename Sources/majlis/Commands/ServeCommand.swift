import Dispatch
import Foundation
import MajlisCommandLine
import Synchronization
import MajlisProtocol
import MajlisServer
import MajlisTransport

/// `majlis serve`: runs the server until SIGTERM or SIGINT.
enum ServeCommand {
    static let help = """
        usage: majlis serve [--listen HOST:PORT] [--media-listen HOST:PORT] [--media-advertise HOST:PORT]
                            [--data DIR] [--postgres URL] [--redis URL --node ID [--signaling-advertise URL] [--cluster-secret SECRET]] [--keys KEY:SECRET[,KEY:SECRET...]] [--resume-grace SECONDS]
                            [--heartbeat SECONDS] [--tls-cert FILE --tls-key FILE] [--log-level LEVEL] [--log-format text|json]
                            [--max-connections-per-address N] [--max-rooms-per-user N] [--max-rooms-per-connection N] [--max-group-members N] [--one-device]
                            [--revoke-seconds SECONDS] [--edit-seconds SECONDS] [--stranger-messages N] [--stranger-overflow refuse|hold]
                            [--request-timeout SECONDS] [--allow-origin ORIGIN[,ORIGIN...]] [--token-url URL]
                            [--history-messages N] [--history-days DAYS] [--web DIR]
                            [--webhook URL[,URL...]] [--webhook-key KEY] [--webhook-retention SECONDS]
                            [--webhook-timeout SECONDS] [--webhook-chat] [--webhook-messages] [--media-realtime] [--config FILE]
        Runs signaling (ws://HOST:PORT/v1/signal), the server API for the app's backend (/v1/rooms, described
        at /v1/openapi.yaml), the web app (http://HOST:PORT/, built into
        the binary; --web DIR serves a folder of it instead, as its files are, for working on it), GET /healthz, GET /metrics and the store (SQLite and the
        DTLS certificate under --data).
        --postgres URL (postgres://USER:PASSWORD@HOST:PORT/DATABASE) keeps the store in PostgreSQL instead (rooms, bans,
        chat, idempotency keys, the webhook outbox, conversations; --data then holds this node's DTLS certificate and development secret
        only); the schema is made or brought up to date on start. `majlis migrate` moves a data directory's store into it.
        --redis URL (redis://[:PASSWORD@]HOST:PORT[/DB]) makes this server a node of a cluster, --node ID its id (unique
        in the cluster): it registers there with its addresses and load every second (GET /v1/nodes, `majlis admin
        nodes`) and leaves on stop; a node that dies leaves the registry within 5 s. --signaling-advertise URL is what
        the registry gives as its signaling (default: ws://LISTEN/v1/signal); --media-advertise, as its media address.
        Nodes sign their registry entries with --cluster-secret (the same on every node; default: derived from --keys)
        and ignore any entry they did not sign (docs/cluster.md: securing the cluster).
        --webhook posts every room event (docs/webhooks.md) to each URL, signed with --webhook-key's secret
        (default: the first key), in order per room, retried with backoff for --webhook-retention seconds
        (default 86400) through outages and restarts; --webhook-timeout (default 10) bounds one post;
        --webhook-chat adds chat messages; --webhook-messages adds conversations' messages (message.created, with the
        members who were offline, for push notifications). Reported messages (message.reported) are always posted.
        --one-device: a user is signed in on one device at a time; signing in on another ends the others' sessions
        (session.ended with reason elsewhere, then close 4004), on every node of a cluster.
        --media-realtime: the thread that forwards voice runs at real-time priority where the process may (root,
        CAP_SYS_NICE, or RLIMIT_RTPRIO of 10 or more), and as an ordinary thread while it takes over half a core;
        /healthz says which (media.realtime).
        Defaults: --listen 127.0.0.1:7880, --media-listen 127.0.0.1:7882, --data ./majlis-data,
        --resume-grace 30, --heartbeat 20, --log-level info (trace, debug, info, warning, error), --log-format text
        (json: one object per line with time, level, message, and for rejected logins and joins, kicks, bans and
        store errors an event name and its fields),
        --max-connections-per-address 256 (WebSockets; 32 more of any kind), --max-rooms-per-user 20 (owned, made or handed
        over; server admins: no limit), --max-rooms-per-connection 10 (rooms a user is in at once), --max-group-members 500
        (a conversation group's members, its owner included), --revoke-seconds 120 and --edit-seconds 900 (how long after
        sending a message its sender may revoke it, and edit its text), --stranger-messages 3 (messages one may send to a
        user who has not written back and shares no group with them; 0: none), --stranger-overflow refuse (or hold: a
        stranger's message past that is held for the app's backend to release or reject, /v1/held-messages), --request-timeout 30
        (an HTTP request's headers and body; 408 after),
        --history-messages 10000 (per room), --history-days 90.
        Without --keys it runs in development mode on loopback only: key "devkey" with a random secret made
        on the first start and kept in --data (dev-secret), so tokens survive restarts; it answers only requests
        whose Host is localhost or an IP address. A browser page may open a WebSocket only from the server's own
        origin or one of --allow-origin (e.g. https://app.example.com; * for any), and only those may embed the web
        app and post it a token. With --keys the web app signs people in with a token their app gives it: in the address
        (#token=...), posted by the embedding page, or from --token-url, the app's URL that answers {"token": ...} to a GET
        with the app's cookies (docs/web.md). Every flag may also be set as MAJLIS_<FLAG>, e.g. MAJLIS_KEYS, or in
        --config FILE, one "flag = value" a line (e.g. listen = 0.0.0.0:7880; media-realtime = true; # comments);
        the command line wins over the environment, which wins over the file.
        """

    static func run(_ arguments: [String]) throws -> Int32 {
        var args = try Arguments(arguments, switches: ["webhook-chat", "webhook-messages", "media-realtime"])
        if args.wantsHelp {
            say(help)
            return 0
        }
        if let file = args.string("config") { try args.loadConfiguration(file) }
        raiseFileLimit()
        var config = ServerConfig()
        (config.host, config.port) = try Arguments.hostPort(args.string("listen", default: "127.0.0.1:7880"), flag: "listen")
        (config.mediaHost, config.mediaPort) = try Arguments.hostPort(args.string("media-listen", default: "127.0.0.1:7882"), flag: "media-listen")
        let advertise = args.string("media-advertise")
        if let advertise {
            let (host, _) = try Arguments.hostPort(advertise, flag: "media-advertise")
            // The example configuration's address (RFC 5737 keeps these for documentation):
            // clients told to send there would never be heard.
            if ["192.0.2.", "198.51.100.", "203.0.113."].contains(where: host.hasPrefix) {
                throw Arguments.Failure(description: "--media-advertise \(advertise) is a documentation address (RFC 5737): give the address clients reach this machine's media port at")
            }
        }
        config.mediaAdvertise = advertise
        config.dataDirectory = args.string("data", default: "./majlis-data")
        config.postgresURL = args.string("postgres")
        config.redisURL = args.string("redis")
        if let secret = args.string("cluster-secret") {
            guard secret.utf8.count >= 16, !secret.uppercased().contains("REPLACE-WITH") else {
                throw Arguments.Failure(description: "--cluster-secret must be at least 16 characters and not the example's placeholder; make one with: openssl rand -hex 32")
            }
            config.clusterSecret = secret
        }
        if let node = args.string("node") {
            guard Identifier.isValid(node) else { throw Arguments.Failure(description: "--node must be an id of 1 to 64 characters of A-Z a-z 0-9 _ . @ -") }
            config.node = node
        } else if config.redisURL != nil {
            throw Arguments.Failure(description: "--redis needs --node ID: this node's id in the cluster (node-1, node-2, ...)")
        }
        if let signaling = args.string("signaling-advertise") {
            guard let url = URL(string: signaling), ["ws", "wss"].contains(url.scheme ?? ""), url.host != nil else {
                throw Arguments.Failure(description: "--signaling-advertise \(signaling) is not a ws:// or wss:// URL")
            }
            config.signalingAdvertise = signaling
        }
        config.resumeGrace = try args.int("resume-grace", default: 30, range: 0...86_400)
        config.heartbeat = try args.int("heartbeat", default: 20, range: 1...3600)
        config.maxConnectionsPerAddress = try args.int("max-connections-per-address", default: 256, range: 1...1_000_000)
        config.oneDevicePerUser = args.flag("one-device")
        config.allowedOrigins = args.string("allow-origin")?.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) } ?? []
        for origin in config.allowedOrigins where origin != "*" && !(origin.hasPrefix("http://") || origin.hasPrefix("https://")) {
            throw Arguments.Failure(description: "--allow-origin \(origin) must be an origin like https://app.example.com (or *)")
        }
        if let tokenURL = args.string("token-url") {
            guard let url = URL(string: tokenURL), ["http", "https"].contains(url.scheme ?? ""), url.host != nil else {
                throw Arguments.Failure(description: "--token-url \(tokenURL) is not an http:// or https:// URL")
            }
            config.tokenURL = tokenURL
        }
        config.maxRoomsPerUser = try args.int("max-rooms-per-user", default: 20, range: 1...1_000_000)
        config.maxRoomsPerConnection = try args.int("max-rooms-per-connection", default: 10, range: 1...10_000)
        config.maxGroupMembers = try args.int("max-group-members", default: 500, range: 2...100_000)
        config.revokeSeconds = try args.int("revoke-seconds", default: 120, range: 0...31_536_000)
        config.editSeconds = try args.int("edit-seconds", default: 900, range: 0...31_536_000)
        config.strangerMessages = try args.int("stranger-messages", default: 3, range: 0...1_000_000)
        config.strangerOverflow = args.string("stranger-overflow", default: "refuse")
        guard ["refuse", "hold"].contains(config.strangerOverflow) else {
            throw Arguments.Failure(description: "--stranger-overflow must be refuse or hold, not \(config.strangerOverflow)")
        }
        config.requestSeconds = try args.int("request-timeout", default: 30, range: 1...3600)
        config.historyMessages = try args.int("history-messages", default: 10_000, range: 1...100_000_000)
        config.historyDays = try args.int("history-days", default: 90, range: 1...36_500)
        config.tlsCertificate = args.string("tls-cert")
        config.tlsKey = args.string("tls-key")
        let levelName = args.string("log-level", default: "info")
        let formatName = args.string("log-format", default: "text")
        let keyList = args.string("keys")
        config.webDirectory = args.string("web")
        if let list = args.string("webhook") {
            for endpoint in list.split(separator: ",").map(String.init) {
                guard let url = URL(string: endpoint), ["http", "https"].contains(url.scheme ?? ""), url.host != nil else {
                    throw Arguments.Failure(description: "--webhook \(endpoint) is not an http:// or https:// URL")
                }
                config.webhooks.endpoints.append(endpoint)
            }
        }
        config.webhooks.key = args.string("webhook-key")
        config.webhooks.retention = try args.int("webhook-retention", default: 86_400, range: 1...(365 * 86_400))
        config.webhooks.timeout = Double(try args.int("webhook-timeout", default: 10, range: 1...600))
        config.webhooks.includeChat = args.flag("webhook-chat")
        config.webhooks.includeMessages = args.flag("webhook-messages")
        config.mediaRealtime = args.flag("media-realtime")
        try args.rejectPositional("serve")
        if let web = config.webDirectory, !FileManager.default.fileExists(atPath: (web as NSString).appendingPathComponent("index.html")) {
            throw Arguments.Failure(description: "--web \(web) has no index.html")
        }
        guard let level = LogLevel(name: levelName) else {
            throw Arguments.Failure(description: "--log-level must be one of trace, debug, info, warning, error")
        }
        if (config.tlsCertificate == nil) != (config.tlsKey == nil) {
            throw Arguments.Failure(description: "--tls-cert and --tls-key go together")
        }
        for file in [config.tlsCertificate, config.tlsKey].compactMap({ $0 }) where !FileManager.default.isReadableFile(atPath: file) {
            throw Arguments.Failure(description: "cannot read \(file)")
        }
        var devSecret: String?
        if let keyList {
            for pair in keyList.split(separator: ",") {
                guard let colon = pair.firstIndex(of: ":"), colon != pair.startIndex, pair.index(after: colon) != pair.endIndex else {
                    throw Arguments.Failure(description: "--keys must be KEY:SECRET[,KEY:SECRET...]")
                }
                let secret = String(pair[pair.index(after: colon)...])
                // The example configuration's placeholder: anyone who read it could sign admin tokens.
                if secret.uppercased().contains("REPLACE-WITH") {
                    throw Arguments.Failure(description: "--keys \(pair[..<colon]): the secret is the example's placeholder; make one with: openssl rand -hex 32")
                }
                config.keys[String(pair[..<colon])] = secret
            }
        } else {
            guard isLoopback(config.host) else {
                throw Arguments.Failure(description: "refusing to listen on \(config.host) without --keys (development mode is for loopback only)")
            }
        }
        if let problem = PortCheck.problem(host: config.host, port: config.port, kind: .tcp) {
            throw Arguments.Failure(
                description: "cannot listen on \(config.host):\(config.port): \(problem)"
                    + (problem == "in use" ? " (is another majlis serve running?); choose another with --listen HOST:PORT" : ""))
        }
        if let problem = PortCheck.problem(host: config.mediaHost, port: config.mediaPort, kind: .udp) {
            throw Arguments.Failure(
                description: "cannot receive media on udp \(config.mediaHost):\(config.mediaPort): \(problem)"
                    + (problem == "in use" ? " (is another majlis serve running?); choose another with --media-listen HOST:PORT" : ""))
        }
        // Held until the process ends: one server per data directory.
        _ = try DataLock.serve(config.dataDirectory)
        if keyList == nil {
            let secret = try DevelopmentSecret.load(directory: config.dataDirectory)
            config.keys[DevelopmentSecret.key] = secret.value
            config.developmentKey = DevelopmentSecret.key
            devSecret = secret.value
        }
        if let key = config.webhooks.key, config.keys[key] == nil {
            throw Arguments.Failure(description: "--webhook-key \(key) is not one of the keys (--keys)")
        }

        guard let format = LogFormat(rawValue: formatName) else { throw Arguments.Failure(description: "--log-format must be text or json") }
        let logger = Logger(label: "majlis", level: level, format: format)
        let server = try SignalingServer(config: config, logger: logger)
        try server.start()
        // Serves until SIGTERM or SIGINT (pending since `main` blocked them, if one came early)
        // cancels it; `run` then stops gracefully. "ready" is printed once stopping works.
        let serving = Task { try await server.run() }
        StopSignals.wait {
            logger.info("shutting down")
            serving.cancel()
        }
        let url = "\(config.tlsCertificate == nil ? "ws" : "wss")://\(config.host):\(server.port)/v1/signal"
        let media = server.mediaAddress
        if let devSecret {
            say(developmentBanner(secret: devSecret, url: url, data: config.dataDirectory, certificate: config.tlsCertificate))
        }
        if config.mediaRealtime, !Self.mayRunRealtime() {
            logger.warning(
                "media-realtime: this process may not run a thread at real-time priority (it needs root, CAP_SYS_NICE, or an RLIMIT_RTPRIO of \(ThreadScheduling.priority) or more: LimitRTPRIO=\(ThreadScheduling.priority) under systemd); voice is forwarded by an ordinary thread")
        }
        say("majlis ready: \(url) media udp \(media)")
        say("open in a browser: http://\(config.host):\(server.port)/?room=majlis")
        say("operator console: http://\(config.host):\(server.port)/console")

        try runBlocking { try await serving.value }
        logger.info("stopped")
        return 0
    }

    /// What development mode prints: the key, its secret, and commands that work as pasted
    /// (the full path of this binary, room `majlis`: a host who creates it in request mode, a guest).
    /// With TLS, the commands trust the server's certificate (`certificate`, often self-signed in
    /// development).
    /// Whether a thread of this process may be made real-time (tried on a thread of its own).
    static func mayRunRealtime() -> Bool {
        let allowed = Atomic<Bool>(false)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            allowed.store(ThreadScheduling.setRealtime(true), ordering: .relaxed)
            ThreadScheduling.setRealtime(false)
            done.signal()
        }
        done.wait()
        return allowed.load(ordering: .relaxed)
    }

    static func developmentBanner(secret: String, url: String, data: String, certificate: String? = nil) -> String {
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let grants = Grants(join: true, create: true, admin: false, publish: true, chat: true)
        func token(_ user: String, _ name: String) -> String {
            TokenCommand.mint(key: DevelopmentSecret.key, secret: secret, user: user, name: name, room: nil, grants: grants, ttl: 86_400)
        }
        let secretFile = (data as NSString).appendingPathComponent(DevelopmentSecret.fileName)
        let trust = certificate.map { " --trust-cert \(URL(fileURLWithPath: $0).standardizedFileURL.path)" } ?? ""
        return """
            development mode: API key "\(DevelopmentSecret.key)", secret \(secret) (kept in \(secretFile); tokens stay valid across restarts)
              a token:     \(executable) token --key \(DevelopmentSecret.key) --secret \(secret) --user USER --name NAME --grants join,create,publish,chat
              host (Huda): \(executable) join --tui --url \(url)\(trust) --token \(token("huda", "Huda")) --room majlis --create --mode request
              guest (Omar): \(executable) join --tui --url \(url)\(trust) --token \(token("omar", "Omar")) --room majlis
            """
    }

    static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host.hasPrefix("127.") || host == "::1"
    }
}
