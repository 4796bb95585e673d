use super::*;

#[test]
fn split_points_are_record_boundaries_near_the_middle() {
    assert_eq!(split_point(b"a\n", b'\n'), None);
    assert_eq!(split_point(b"abc", b'\n'), None);
    assert_eq!(split_point(b"", b'\n'), None);
    assert_eq!(split_point(b"a\nb\n", b'\n'), Some(2));
    assert_eq!(split_point(b"a\nb", b'\n'), Some(2));
    assert_eq!(split_point(b"1\n2\n3\n4\n", b'\n'), Some(4));
    assert_eq!(split_point(b"long record\nx\n", b'\n'), Some(12));
}
