// values.rs fills statics of Rust types (Option, Result, enums with data,
// &str, String, Vec, slices, structs), prints the rendering the debugger
// is expected to produce for each (computed from the data with Debug),
// then blocks on stdin so a test can read the statics of the live process.
#![allow(static_mut_refs)]
use std::io::BufRead;

#[derive(Debug, Clone)]
pub enum Shape {
    Circle(f64),
    Rect { w: u32, h: u32 },
    Empty,
}

#[derive(Debug, Clone, Copy)]
pub struct Point {
    pub x: i32,
    pub y: i32,
}

#[derive(Debug, Clone, Copy)]
pub enum Level {
    Low,
    High = 7,
}

pub static mut SOME: Option<i32> = None;
pub static mut NONE: Option<i32> = None;
pub static mut OK: Result<i32, String> = Ok(0);
pub static mut ERR: Result<i32, String> = Ok(0);
pub static mut CIRCLE: Shape = Shape::Empty;
pub static mut RECT: Shape = Shape::Empty;
pub static mut EMPTY: Shape = Shape::Empty;
pub static mut STR: &str = "";
pub static mut STRING: String = String::new();
pub static mut VEC: Vec<i32> = Vec::new();
pub static mut SLICE: &[i32] = &[];
pub static mut POINT: Point = Point { x: 0, y: 0 };
pub static mut LEVEL: Level = Level::Low;
pub static mut BOXED: Option<Box<Point>> = None;
pub static mut NUMBERS: [u16; 4] = [0; 4];
pub static mut FLAG: bool = false;
pub static mut TUPLE: (i32, char) = (0, 'a');

static DATA: [i32; 5] = [10, 20, 30, 40, 50];

fn main() {
    // Statics are filled at run time so the values live in writable memory
    // the test reads from the process, not constants folded into .rodata.
    unsafe {
        SOME = Some(5);
        NONE = None;
        OK = Ok(-3);
        ERR = Err(String::from("bad input"));
        CIRCLE = Shape::Circle(1.5);
        RECT = Shape::Rect { w: 3, h: 4 };
        EMPTY = Shape::Empty;
        STR = "hello rust";
        STRING = String::from("owned text");
        VEC = Vec::with_capacity(8);
        VEC.extend_from_slice(&[1, 2, 3]);
        SLICE = &DATA[1..4];
        POINT = Point { x: -1, y: 2 };
        LEVEL = Level::High;
        BOXED = Some(Box::new(Point { x: 9, y: 8 }));
        NUMBERS = [1, 1, 2, 3];
        FLAG = true;
        TUPLE = (4, 'z');
        let expect: Vec<(&str, String)> = vec![
            ("SOME", format!("{:?}", SOME)),
            ("NONE", format!("{:?}", NONE)),
            ("OK", format!("{:?}", OK)),
            ("ERR", format!("{:?}", ERR)),
            ("CIRCLE", format!("{:?}", CIRCLE)),
            ("RECT", format!("{:?}", RECT)),
            ("EMPTY", format!("{:?}", EMPTY)),
            ("STR", format!("{:?}", STR)),
            ("STRING", format!("{:?}", STRING)),
            ("VEC", format!("vec!{:?}", VEC)),
            ("SLICE", format!("{:?}", SLICE)),
            ("POINT", format!("{:?}", POINT)),
            ("LEVEL", format!("{:?}", LEVEL)),
            ("NUMBERS", format!("{:?}", NUMBERS)),
            ("FLAG", format!("{:?}", FLAG)),
            ("TUPLE", format!("{:?}", TUPLE)),
        ];
        for (name, text) in &expect {
            println!("{}\t{}", name, text);
        }
    }
    println!("ready");
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line).unwrap();
}
