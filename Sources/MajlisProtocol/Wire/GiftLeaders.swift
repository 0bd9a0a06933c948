import Foundation

/// A room's leaderboard of gifts (`gift.leaders`, and the server API's `GET .../gifts/leaders`):
/// its top givers and receivers by items, the most first (equal counts by user id).
public struct GiftLeaders: Sendable, Codable, Equatable {
    public var givers: [GiftTally]
    public var receivers: [GiftTally]

    public init(givers: [GiftTally], receivers: [GiftTally]) {
        self.givers = givers
        self.receivers = receivers
    }

    /// How many of each a leaderboard may list.
    public static let limits = 1...100

    /// The Unix ms span of one UTC day, `YYYY-MM-DD`, if it is a date.
    public static func span(ofDay day: String) -> Range<Int64>? {
        let parts = day.split(separator: "-", omittingEmptySubsequences: false)
        guard day.count == 10, parts.count == 3, let year = Int(parts[0]), let month = Int(parts[1]), let date = Int(parts[2]),
            (1...9999).contains(year), (1...12).contains(month), (1...31).contains(date)
        else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let components = DateComponents(year: year, month: month, day: date)
        guard components.isValidDate(in: calendar), let start = calendar.date(from: components) else { return nil }
        let milliseconds = Int64(start.timeIntervalSince1970 * 1_000)
        return milliseconds..<milliseconds + 86_400_000
    }
}
