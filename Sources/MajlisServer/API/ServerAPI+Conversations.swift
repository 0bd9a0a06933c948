import Foundation
import MajlisProtocol
import MajlisTransport

/// The server API's conversations (docs/openapi.yaml): the app's backend makes groups, adds and
/// removes members, posts as the system or a bot, deletes messages, and releases or rejects
/// held messages. Each is carried out on the messaging queue (`MessagingRequests.perform`), in
/// order with members' ops, and tells members' devices as their own ops do.
extension ServerAPI {
    /// Runs `work` on the messaging queue and answers with its data (`status`, 200 by default).
    func messaging(
        _ call: APICall, status: UInt32 = 200, _ work: @escaping @Sendable (MessagingRequests, Int64) throws -> MessagingRequests.Outcome
    ) throws {
        let exchange = call.exchange
        messagingRequests.perform({ [messagingRequests] now in try work(messagingRequests, now) }) { result in
            switch result {
            case .success(let data): exchange.respond(HTTPResponse(status: status, body: Array(data)))
            case .failure(let error as ProtocolError): exchange.respond(APIFailure(error).response)
            case .failure(let error as APIFailure): exchange.respond(error.response)
            case .failure: exchange.respond(APIFailure(ProtocolError(.internal, "the server could not store or read that; nothing changed")).response)
            }
        }
    }

    /// `POST /v1/conversations`: a group of `owner` (required) and `members`.
    func createGroup(_ call: APICall) throws {
        var body = try call.body()
        guard case .string(let owner)? = body.removeValue(forKey: "owner"), Identifier.isValid(owner) else {
            throw APIFailure(ProtocolError(.badRequest, "owner must be a user id of 1 to 64 characters of A-Z a-z 0-9 _ . @ -"))
        }
        guard case .createGroup(let title, let members, let access, let about) = try Self.command("conv.create", body) else { throw Self.unexpected }
        let by = call.claims.sub
        try messaging(call, status: 201) { messaging, now in
            try messaging.createGroup(title: title, owner: owner, members: members, access: access, about: about, by: by, now: now)
        }
    }

    /// `POST /v1/conversations/{conversation}/members`.
    func addMembers(_ call: APICall) throws {
        var args = try call.body()
        args["conversation"] = .string(call.parameters["conversation"])
        guard case .invite(let id, let users) = try Self.command("conv.invite", args) else { throw Self.unexpected }
        let by = call.claims.sub
        try messaging(call) { messaging, now in try messaging.addMembers(users, to: id, by: by, now: now) }
    }

    /// `POST /v1/conversations/{conversation}/messages` and (`direct`) `POST /v1/users/{user}/messages`:
    /// posted as `from` (default: the system); `Idempotency-Key` is its client id.
    func postMessage(_ call: APICall, direct: Bool) throws {
        var args = try call.body()
        if args["payload"] == .null { throw APIFailure(ProtocolError(.badRequest, "payload must not be null (leave it out instead)")) }
        let sender = try sender(call, &args)
        if direct, sender.id == "system" {
            throw APIFailure(ProtocolError(.badRequest, "a direct message is from a user or a bot: give from.id"))
        }
        let key = call.request.headers["idempotency-key"]
        if let key, key.isEmpty || key.count > 64 { throw APIFailure(ProtocolError(.badRequest, "Idempotency-Key must be 1 to 64 characters")) }
        args["clientMsgId"] = .string(key ?? ("api-" + HMACSHA256.randomBytes(8).map { String(format: "%02x", $0) }.joined()))
        let target = direct ? "to" : "conversation"
        args[target] = .string(call.parameters[direct ? "user" : "conversation"])
        guard case .send(let to, let draft) = try Self.command("msg.send", args) else { throw Self.unexpected }
        if case .user(let user) = to, user == sender.id { throw APIFailure(ProtocolError(.forbidden, "from.id and the user are one: a message goes to another user")) }
        let from = UserRef(id: sender.id, name: sender.name)
        try messaging(call) { messaging, now in
            switch to {
            case .user(let user): try messaging.post(draft, as: from, in: nil, direct: user, now: now)
            case .conversation(let id): try messaging.post(draft, as: from, in: id, direct: nil, now: now)
            }
        }
    }

    private static let unexpected = APIFailure(ProtocolError(.internal, "the request was read as another op"))

    /// The messaging command `op` with `args` stands for, validated as a member's would be.
    private static func command(_ op: String, _ args: [String: JSONValue]) throws -> MessagingCommand {
        switch RequestDecoder.messagingCommand(op: op, args: args) {
        case .success(let command): return command
        case .failure(let error): throw APIFailure(error)
        }
    }
}
