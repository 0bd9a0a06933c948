import Foundation
import MajlisCommandLine
import MajlisProtocol
import MajlisTransport

/// `majlis token`: prints an access token.
enum TokenCommand {
    static let help = """
        usage: majlis token --key KEY --secret SECRET --user ID [--name NAME] [--room ROOM|*]
                            [--grants LIST] [--ttl SECONDS]
        Prints a JWT (HS256) access token. LIST is comma-separated from: \(Grants.names.joined(separator: ", "))
        (default join,publish,chat). --ttl defaults to 3600 seconds.
        """

    static func run(_ arguments: [String]) throws -> Int32 {
        var args = try Arguments(arguments)
        if args.wantsHelp {
            say(help)
            return 0
        }
        guard let key = args.string("key"), let secret = args.string("secret"), let user = args.string("user") else {
            throw Arguments.Failure(description: "--key, --secret and --user are required (see majlis token --help)")
        }
        guard Identifier.isValid(user) else {
            throw Arguments.Failure(description: "--user must be 1 to 64 characters of A-Z a-z 0-9 _ . @ -")
        }
        let name = args.string("name")
        let room = args.string("room")
        let grantList = args.string("grants", default: "join,publish,chat")
        let ttl = try args.int("ttl", default: 3600, range: 1...(10 * 365 * 86_400))
        try args.rejectPositional("token")
        let grants: Grants
        do {
            grants = try Grants(names: grantList.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty })
        } catch {
            throw Arguments.Failure(description: error.message)
        }
        say(mint(key: key, secret: secret, user: user, name: name, room: room, grants: grants, ttl: ttl))
        return 0
    }

    static func mint(key: String, secret: String, user: String, name: String?, room: String?, grants: Grants, ttl: Int) -> String {
        let now = SystemClock().now() / 1000
        let claims = AccessClaims(sub: user, name: name, exp: now + Int64(ttl), iat: now, room: room, grants: grants)
        return AccessToken.sign(claims, key: key, secret: secret)
    }
}
