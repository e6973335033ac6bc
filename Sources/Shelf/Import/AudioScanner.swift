import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Walks directories for audio files: depth first, streaming (memory grows with the depth of the
/// tree, not the number of files), hidden entries skipped, symbolic links followed but every
/// directory visited once (so a link loop ends), unreadable entries reported, not fatal.
struct AudioScanner {
    /// Extensions taken as audio without looking inside.
    static let audioExtensions: Set<String> = [
        "mp3", "mp2", "m4a", "m4b", "mp4", "aac", "flac", "ogg", "oga", "opus", "wav", "wave", "aif", "aiff", "aifc",
        "wv", "ape", "wma", "asf", "mpc", "mka", "tta", "dsf", "dff", "mod", "xm", "s3m", "it",
    ]
    /// Extensions never audio (covers, playlists, notes): not even opened.
    static let otherExtensions: Set<String> = [
        "jpg", "jpeg", "png", "gif", "bmp", "webp", "tif", "tiff", "txt", "nfo", "cue", "log", "m3u", "m3u8", "pls", "pdf",
        "db", "ini", "sfv", "md5", "lrc", "xml", "json", "html", "htm", "url", "ds_store", "sqlite", "sqlite-wal", "sqlite-shm",
    ]

    /// An audio file found: where, how big, when last modified.
    struct Found {
        let url: URL
        let size: Int64
        let modified: Date
    }

    private var roots: [String]
    private var directories: [String] = []
    /// The current directory's audio files, last first: taken from the end in order.
    private var ready: [Found] = []
    private var visited = Set<[UInt64]>()
    /// Entries that could not be read, and why; the caller drains it.
    var failures: [(path: String, reason: String)] = []
    /// The playlist files (`.m3u`, `.m3u8`) met on the way, in walk order.
    var playlists: [String] = []

    /// Whether a file is a playlist file the import reads after the audio.
    static func isPlaylist(_ path: String) -> Bool {
        let ext = URL(fileURLWithPath: path).pathExtension.lowercased()
        return ext == "m3u" || ext == "m3u8"
    }

    /// A walk over `roots` (files or directories).
    init(_ roots: [URL]) {
        self.roots = roots.map(\.standardizedFileURL.path).reversed()
    }

    /// The next audio file, or nil when the walk is over.
    mutating func next() -> Found? {
        while true {
            if let found = ready.popLast() { return found }
            if let root = roots.popLast() {
                var info = stat()
                guard stat(root, &info) == 0 else {
                    failures.append((root, String(cString: strerror(errno))))
                    continue
                }
                if info.st_mode & S_IFMT == S_IFDIR {
                    directories.append(root)
                } else if Self.isAudio(root) {
                    return Found(url: URL(fileURLWithPath: root), size: Int64(info.st_size), modified: Self.modified(info))
                } else if Self.isPlaylist(root) {
                    playlists.append(root)
                } else {
                    failures.append((root, "not an audio file"))
                }
                continue
            }
            guard let directory = directories.popLast() else { return nil }
            list(directory)
        }
    }

    /// Reads one directory: its audio files become `ready`, its subdirectories go on the stack.
    private mutating func list(_ directory: String) {
        var info = stat()
        guard stat(directory, &info) == 0 else {
            failures.append((directory, String(cString: strerror(errno))))
            return
        }
        guard visited.insert([UInt64(info.st_dev), UInt64(info.st_ino)]).inserted else { return }
        guard let handle = opendir(directory) else {
            failures.append((directory, String(cString: strerror(errno))))
            return
        }
        var names: [String] = []
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name.hasPrefix(".") { continue }  // ".", "..", and hidden entries
            names.append(name)
        }
        closedir(handle)
        // Sorted, so that imports are deterministic; subdirectories go on the stack reversed so
        // that they come off it in order, after this directory's files.
        var subdirectories: [String] = []
        for name in names.sorted() {
            let path = directory == "/" ? "/" + name : directory + "/" + name
            var entryInfo = stat()
            guard stat(path, &entryInfo) == 0 else {
                failures.append((path, String(cString: strerror(errno))))
                continue
            }
            switch entryInfo.st_mode & S_IFMT {
            case S_IFDIR: subdirectories.append(path)
            case S_IFREG:
                if Self.isAudio(path) {
                    ready.append(Found(url: URL(fileURLWithPath: path), size: Int64(entryInfo.st_size), modified: Self.modified(entryInfo)))
                } else if Self.isPlaylist(path) {
                    playlists.append(path)
                }
            default: continue
            }
        }
        ready.reverse()
        directories.append(contentsOf: subdirectories.reversed())
    }

    static func modified(_ info: stat) -> Date {
        Date(timeIntervalSince1970: Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9)
    }

    /// How many audio files a walk over `roots` would find: directory entries only (their types
    /// from readdir), no stat of regular files, so counting costs a fraction of the walk.
    static func count(_ roots: [URL]) -> Int {
        var total = 0
        var visited = Set<[UInt64]>()
        var directories: [String] = []
        for root in roots.map(\.standardizedFileURL.path) {
            var info = stat()
            guard stat(root, &info) == 0 else { continue }
            if info.st_mode & S_IFMT == S_IFDIR { directories.append(root) } else if isAudio(root) { total += 1 }
        }
        while let directory = directories.popLast() {
            var info = stat()
            guard stat(directory, &info) == 0, visited.insert([UInt64(info.st_dev), UInt64(info.st_ino)]).inserted,
                let handle = opendir(directory)
            else { continue }
            while let entry = readdir(handle) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self) }
                if name.hasPrefix(".") { continue }
                let path = directory == "/" ? "/" + name : directory + "/" + name
                var type = Int32(entry.pointee.d_type)
                if type == Int32(DT_LNK) || type == Int32(DT_UNKNOWN) {
                    var target = stat()
                    guard stat(path, &target) == 0 else { continue }
                    type = target.st_mode & S_IFMT == S_IFDIR ? Int32(DT_DIR) : target.st_mode & S_IFMT == S_IFREG ? Int32(DT_REG) : 0
                }
                if type == Int32(DT_DIR) { directories.append(path) } else if type == Int32(DT_REG), isAudio(path) { total += 1 }
            }
            closedir(handle)
        }
        return total
    }

    /// The lowercased extension of a path's last component ("" when there is none).
    static func pathExtension(_ path: String) -> String {
        let utf8 = path.utf8
        guard let dot = utf8.lastIndex(of: UInt8(ascii: ".")) else { return "" }
        if let slash = utf8.lastIndex(of: UInt8(ascii: "/")), slash > dot { return "" }
        return String(path[path.index(after: dot)...]).lowercased()
    }

    /// By extension, or for an unknown one by the first bytes.
    static func isAudio(_ path: String) -> Bool {
        let ext = pathExtension(path)
        if audioExtensions.contains(ext) { return true }
        if otherExtensions.contains(ext) { return false }
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        guard let head = try? handle.read(upToCount: 64), head.count >= 4 else { return false }
        return looksLikeAudio(head)
    }

    /// Magic numbers of the formats TagLib or ffprobe reads (not Matroska: without an audio
    /// extension it is as likely a video).
    static func looksLikeAudio(_ head: Data) -> Bool {
        let bytes = [UInt8](head)
        func starts(_ text: String, at offset: Int = 0) -> Bool {
            let magic = Array(text.utf8)
            return bytes.count >= offset + magic.count && Array(bytes[offset..<offset + magic.count]) == magic
        }
        if (starts("RIFF") || starts("RF64") || starts("BW64")) && starts("WAVE", at: 8) { return true }
        if starts("TTA1") || starts("DSD ") || (starts("FRM8") && starts("DSD ", at: 12)) { return true }
        if starts("Extended Module: ") || starts("IMPM") || starts("SCRM", at: 44) { return true }
        if starts("FORM") && (starts("AIFF", at: 8) || starts("AIFC", at: 8)) { return true }
        if starts("fLaC") || starts("OggS") || starts("ID3") || starts("wvpk") || starts("MAC ") || starts("MPCK") { return true }
        if starts("ftyp", at: 4) { return true }
        if bytes.count >= 4, bytes[0..<4] == [0x30, 0x26, 0xB2, 0x75] { return true }  // ASF
        if bytes.count >= 2, bytes[0] == 0xFF, bytes[1] & 0xE0 == 0xE0 { return true }  // MPEG frame sync
        return false
    }
}
