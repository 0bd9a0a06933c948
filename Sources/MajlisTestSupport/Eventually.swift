import Foundation

/// Waits until `condition` holds, checking every 20 ms, for at most `seconds` (generous, so a busy
/// machine only makes a passing test slower); returns whether it held.
@discardableResult
public func eventually(within seconds: Double = 30, _ condition: () async -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while true {
        if await condition() { return true }
        if Date() > deadline { return false }
        try? await Task.sleep(for: .milliseconds(20))
    }
}
