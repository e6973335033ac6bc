import CImageCodecs
import CTagLib
import ShelfDatabase

/// The engine's own version, the schema versions it writes, and the versions of the C libraries
/// it found, so that a bug report (`shelf version --json`) names everything that shaped a result.
public enum EngineVersions {
    /// Shelf's release version; the command-line tools report it as theirs.
    public static let version = "0.16.0"
    /// The canonical store's `PRAGMA user_version` this build writes and reads.
    public static var storeSchema: Int { Schema.currentVersion }
    /// The read mirror's layout version; a mirror of another version is rebuilt.
    public static var mirrorSchema: Int { MirrorSchema.version }
    /// The SQLite loaded at run time.
    public static var sqlite: String { SQLiteLibrary.version }
    /// The TagLib compiled against (TagLib 1.x has no run-time version call); nil if unknown.
    public static var taglib: String? { nonEmpty(String(cString: shelf_tags_taglib_version())) }
    /// The libjpeg-turbo compiled against (2.x has no run-time version call); nil if unknown.
    public static var libjpegTurbo: String? { nonEmpty(String(cString: shelf_image_jpeg_turbo_version())) }
    /// The libpng loaded at run time, from `png_access_version_number` (10639 → "1.6.39").
    public static var libpng: String? {
        let number = Int(shelf_image_png_version_number())
        guard number > 0 else { return nil }
        return "\(number / 10_000).\(number / 100 % 100).\(number % 100)"
    }

    /// The libwebp decoder loaded at run time (0x010204 → "1.2.4").
    public static var libwebp: String? {
        let number = Int(shelf_image_webp_version_number())
        guard number > 0 else { return nil }
        return "\(number >> 16).\((number >> 8) & 0xFF).\(number & 0xFF)"
    }

    private static func nonEmpty(_ text: String) -> String? { text.isEmpty ? nil : text }
}

extension Library {
    /// Caps what SQLite keeps in memory in this process, every library's connections together:
    /// past it, page caches reuse their oldest pages instead of growing. Zero removes the cap.
    public static func limitDatabaseMemory(toBytes bytes: Int64) { SQLiteLibrary.limitMemory(toBytes: bytes) }

    /// What SQLite holds in this process now and the cap on it (zero for none): the part of a
    /// server's memory that is the libraries' caches.
    public static var databaseMemory: (inUse: Int64, limit: Int64) { (SQLiteLibrary.memoryInUse, SQLiteLibrary.memoryLimit) }
}
