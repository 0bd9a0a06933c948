/// The SDK's name for the clock it takes: the one `MillisecondClock` of every Majlis module
/// (`SystemClock` in apps, `ManualClock` in tests and previews).
public typealias KitClock = MillisecondClock
