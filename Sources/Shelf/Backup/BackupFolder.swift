import Foundation
import ShelfDatabase

/// One backup file in a backup folder, as `BackupFolder.list` found it.
public struct BackupFileInfo: Sendable, Codable, Equatable {
    /// The file's name (`shelf-20261203-181500.shelfbackup`).
    public var name: String
    /// Its full path.
    public var path: String
    /// Its size in bytes.
    public var bytes: Int64
    /// When the copy was taken, as the file records it; the file's modification time when it
    /// cannot be read.
    public var created: Date
    /// The store's schema version (`PRAGMA user_version`); nil when the file cannot be read.
    public var schemaVersion: Int?
    /// The tracks in the backup; nil when the file cannot be read.
    public var trackCount: Int?
    /// Whether the library's secret key is inside (the file is then as private as the key).
    public var includesSecretKey: Bool
    /// Why the file could not be read; nil when it was.
    public var error: String?
}

/// A folder of backups taken on a schedule (`shelf serve`'s `backup-dir`): the names they get,
/// the list of them, and the rotation that keeps the newest few.
///
/// Backups are named `shelf-YYYYMMDD-HHMMSS.shelfbackup` (UTC), with `-N` before the extension
/// when two are taken within one second, so their names sort by the time they were taken.
public enum BackupFolder {
    /// The extension of a backup file.
    public static let fileExtension = "shelfbackup"

    /// The name of a backup taken at `date`: `shelf-20261203-181500.shelfbackup`, in UTC so that
    /// names sort by time whatever the server's time zone and across daylight-saving changes.
    public static func fileName(for date: Date) -> String {
        "shelf-\(stamp(date)).\(fileExtension)"
    }

    /// Where in `directory` a backup taken at `date` goes: `fileName(for:)`, or with `-2`, `-3`, …
    /// when that name is taken, so that a second backup within the same second replaces none.
    public static func newFile(in directory: URL, for date: Date) -> URL {
        let base = "shelf-\(stamp(date))"
        // After the highest counter of that second still in the folder, not the first free one:
        // a name pruned a moment ago must not come back, or it would sort before newer copies.
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        let highest = names.compactMap { name -> Int? in
            if name == "\(base).\(fileExtension)" { return 1 }
            guard name.hasPrefix(base + "-"), name.hasSuffix("." + fileExtension) else { return nil }
            return Int(name.dropFirst(base.count + 1).dropLast(fileExtension.count + 1))
        }.max()
        guard let highest else { return directory.appendingPathComponent("\(base).\(fileExtension)") }
        return directory.appendingPathComponent("\(base)-\(highest + 1).\(fileExtension)")
    }

    /// The files named `shelf-*.shelfbackup` in `directory`, newest first, each read for its facts.
    /// A file that cannot be read is listed with `error` instead of failing the list; a folder
    /// that does not exist (yet) has no backups.
    public static func list(_ directory: URL) throws -> [BackupFileInfo] {
        let found = try backupNames(in: directory)
        let infos = found.map { read(directory.appendingPathComponent($0)) }
        return infos.sorted { a, b in
            let (left, right) = (order(a), order(b))
            return left != right ? left > right : a.name > b.name
        }
    }

    /// Deletes the oldest backups in `directory` beyond the newest `keep`, oldest meaning the
    /// earliest time in the name (`newest`, the one just taken, is always kept), and returns the
    /// names deleted. Only files named as this folder
    /// names backups (`shelf-YYYYMMDD-HHMMSS[-N].shelfbackup`) are counted or deleted: anything
    /// else there, a backup copied in by hand under another name included, is left alone.
    @discardableResult
    public static func prune(_ directory: URL, keep: Int, sparing newest: String? = nil) throws -> [String] {
        let dated = try backupNames(in: directory).compactMap { name in stampOrder(name).map { (name, $0) } }
        let newestFirst = dated.sorted { $0.1 != $1.1 ? $0.1 > $1.1 : $0.0 > $1.0 }
        var deleted: [String] = []
        // The backup just taken is kept whatever its name says: a clock set back would otherwise
        // name it older than the rest and delete it at once.
        let spared = newestFirst.filter { $0.0 == newest }.count
        for (name, _) in newestFirst.filter({ $0.0 != newest }).dropFirst(max(keep - spared, 0)) {
            let path = directory.appendingPathComponent(name).path
            if unlink(path) != 0 {
                let failure = errno
                // Gone already (removed by hand meanwhile) is what pruning wanted.
                guard failure == ENOENT else {
                    throw LibraryError.backupFailed(path: path, reason: "cannot delete this old backup: \(String(cString: strerror(failure)))")
                }
            }
            deleted.append(name)
        }
        if !deleted.isEmpty { BackupFile.syncFolder(directory) }
        return deleted
    }

    /// Deletes the hidden partial copies (`.NAME.partial-…`) a backup cut off by a stop or a crash
    /// left in `directory`: each is as large as the library and may hold its key. Returns their names.
    public static func removePartialCopies(_ directory: URL) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        let partial = names.filter { $0.hasPrefix(".shelf-") && $0.contains(".shelfbackup.partial-") }
        for name in partial { BackupFile.remove(directory.appendingPathComponent(name)) }
        return partial
    }

    // MARK: Reading

    /// The regular files of `directory` named `shelf-*.shelfbackup` (a partial copy's temporary
    /// name starts with a dot, so it is never among them).
    private static func backupNames(in directory: URL) throws -> [String] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        } catch {
            var isDirectory: ObjCBool = false
            if !FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory) { return [] }
            throw LibraryError.backupFailed(
                path: directory.path, reason: isDirectory.boolValue ? "cannot list the backup folder: \(error.localizedDescription)" : "it is not a folder")
        }
        return names.filter { name in
            guard name.hasPrefix("shelf-"), name.hasSuffix(".\(fileExtension)") else { return false }
            var info = stat()
            return lstat(directory.appendingPathComponent(name).path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
        }
    }

    /// One file's facts, read through a read-only connection; what cannot be read becomes `error`.
    private static func read(_ file: URL) -> BackupFileInfo {
        let attributes = try? FileManager.default.attributesOfItem(atPath: file.path)
        let modified = attributes?[.modificationDate] as? Date ?? Date(timeIntervalSince1970: 0)
        var info = BackupFileInfo(
            name: file.lastPathComponent, path: file.path, bytes: (attributes?[.size] as? NSNumber)?.int64Value ?? 0, created: modified,
            schemaVersion: nil, trackCount: nil, includesSecretKey: false, error: nil)
        do {
            let db = try Connection(path: file.path, mode: .readOnly, busyTimeoutMilliseconds: 1_000)
            guard try db.scalar(Int.self, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'shelf_backup'") ?? 0 > 0 else {
                info.error = "it is not a Shelf backup (it has no shelf_backup table)"
                return info
            }
            if let text = try db.scalar(String.self, "SELECT value FROM shelf_backup WHERE name = 'created'"),
                let created = ISO8601DateFormatter().date(from: text)
            {
                info.created = created
            }
            info.includesSecretKey = try db.scalar(Int.self, "SELECT count(*) FROM shelf_backup WHERE name = 'secret_key'") ?? 0 > 0
            info.schemaVersion = try db.scalar(Int.self, "PRAGMA user_version") ?? 0
            info.trackCount = try db.scalar(Int.self, "SELECT count(*) FROM track") ?? 0
        } catch let error as SQLiteError where error.code == .notADatabase || error.code == .corrupt {
            info.error = "it is not a readable SQLite file (\(error.message))"
        } catch {
            info.error = BackupFile.describe(error)
        }
        return info
    }

    // MARK: Names and order

    /// `YYYYMMDD-HHMMSS` of `date` in UTC.
    private static func stamp(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: 0) ?? calendar.timeZone
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        func digits(_ value: Int?, _ width: Int) -> String {
            let text = String(value ?? 0)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return digits(parts.year, 4) + digits(parts.month, 2) + digits(parts.day, 2) + "-" + digits(parts.hour, 2) + digits(parts.minute, 2)
            + digits(parts.second, 2)
    }

    /// Where a name of the form `shelf-YYYYMMDD-HHMMSS[-N].shelfbackup` sorts: its time, then its
    /// counter (1 without one); nil for any other name.
    private static func stampOrder(_ name: String) -> Order? {
        guard name.hasPrefix("shelf-"), name.hasSuffix(".\(fileExtension)") else { return nil }
        let middle = name.dropFirst("shelf-".count).dropLast(fileExtension.count + 1)
        let parts = middle.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2 || parts.count == 3, parts[0].count == 8, parts[1].count == 6,
            parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy { $0.isASCII && $0.isNumber } })
        else { return nil }
        var counter = 1
        if parts.count == 3 {
            guard let value = Int(parts[2]), value >= 2 else { return nil }
            counter = value
        }
        return Order(stamp: "\(parts[0])-\(parts[1])", counter: counter)
    }

    /// A listed file's place: its name's time when it has one, else the time it records.
    private static func order(_ info: BackupFileInfo) -> Order {
        stampOrder(info.name) ?? Order(stamp: stamp(info.created), counter: 0)
    }

    /// A backup's place in time: the UTC stamp (which sorts as text), then the same-second counter.
    private struct Order: Comparable {
        let stamp: String
        let counter: Int

        static func < (a: Order, b: Order) -> Bool { (a.stamp, a.counter) < (b.stamp, b.counter) }
    }
}
