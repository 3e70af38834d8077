//! Authored oracles: the work a person would do, reading the task's inputs (tool calls
//! written by hand after reading each OfficeBench task), keyed by imported task id. Only
//! the calls are stored here, never OfficeBench's data: they are applied to the user's
//! checkout at import time.

use serde_json::Value;

use super::oracle::Oracle;

/// (task id, JSONL tool calls, final message).
const TABLE: &[(&str, &str, Option<&str>)] = &[
    (
        "ob-1-1-0",
        r#"{"tool": "calendar_list", "args": {}}
{"tool": "calendar_create", "args": {"summary": "Meeting", "start": "2024-05-17T10:30:00", "end": "2024-05-17T11:00:00"}}"#,
        None,
    ),
    (
        "ob-1-1-1",
        r#"{"tool": "calendar_list", "args": {}}
{"tool": "calendar_create", "args": {"summary": "Dinner", "start": "2024-05-18T19:00:00", "end": "2024-05-18T20:00:00"}}"#,
        None,
    ),
    (
        "ob-1-1-2",
        r#"{"tool": "calendar_create", "args": {"summary": "Workout", "start": "2024-05-16T17:00:00", "end": "2024-05-16T18:00:00"}}"#,
        None,
    ),
    (
        "ob-1-1-3",
        r#"{"tool": "calendar_create", "args": {"summary": "Class", "start": "2024-05-15T16:00:00", "end": "2024-05-15T18:00:00", "location": "Mathematic Science 4000A"}}"#,
        None,
    ),
    (
        "ob-1-1-4",
        r#"{"tool": "calendar_create", "args": {"summary": "Travelling in Florida", "start": "2024-06-19T08:00:00", "end": "2024-06-23T20:00:00", "location": "Florida"}}"#,
        None,
    ),
    // Bob is free 14:00-16:00, Tom 14:30-16:00 on 1 May
    (
        "ob-1-2-0",
        r#"{"tool": "calendar_list", "args": {"from": "2024-05-01T00:00:00", "to": "2024-05-02T00:00:00"}}
{"tool": "files_read", "args": {"path": "testbed/calendar/Tom.ics"}}
{"tool": "calendar_create", "args": {"summary": "Zoom meeting", "start": "2024-05-01T14:30:00", "end": "2024-05-01T15:30:00", "attendees": ["tom@example.com"]}}"#,
        None,
    ),
    (
        "ob-1-2-3",
        r#"{"tool": "calendar_list", "args": {}}
{"tool": "files_read", "args": {"path": "testbed/calendar/Tom.ics"}}"#,
        Some(
            "Tom gets up earlier: his first event (class) starts at 08:00, while Bob is sleeping until 11:00.",
        ),
    ),
    (
        "ob-1-2-4",
        r#"{"tool": "calendar_list", "args": {}}
{"tool": "files_read", "args": {"path": "testbed/calendar/Tom.ics"}}"#,
        Some(
            "Tom has more commitments on 5/1/2024: lunch with David, two classes, a report to Charlie and dinner; most of Bob's day is sleep and a nap.",
        ),
    ),
    (
        "ob-1-3-0",
        r#"{"tool": "files_list", "args": {}}
{"tool": "files_move", "args": {"from": "file1.docx", "to": "test_file1.docx"}}"#,
        None,
    ),
    (
        "ob-1-3-2",
        r#"{"tool": "files_list", "args": {}}
{"tool": "sheets_import", "args": {"path": "file3.xlsx", "name": "file3"}}
{"tool": "sheets_export", "args": {"spreadsheet": "file3", "path": "temp.xlsx"}}"#,
        None,
    ),
    (
        "ob-1-3-3",
        r#"{"tool": "files_list", "args": {}}
{"tool": "files_delete", "args": {"path": "file3.xlsx"}}"#,
        None,
    ),
    (
        "ob-1-3-4",
        r#"{"tool": "files_list", "args": {}}
{"tool": "files_move", "args": {"from": "file1.docx", "to": "new_dir/file1.docx"}}
{"tool": "files_move", "args": {"from": "file2.pdf", "to": "new_dir/file2.pdf"}}
{"tool": "files_move", "args": {"from": "file3.xlsx", "to": "new_dir/file3.xlsx"}}
{"tool": "files_move", "args": {"from": "file4.jpg", "to": "new_dir/file4.jpg"}}"#,
        None,
    ),
    // Bob is row 12
    (
        "ob-1-4-0",
        r#"{"tool": "files_read", "args": {"path": "score.xlsx"}}
{"tool": "sheets_import", "args": {"path": "score.xlsx", "name": "score"}}
{"tool": "sheets_write", "args": {"spreadsheet": "score", "range": "B12", "values": [[100]]}}
{"tool": "sheets_export", "args": {"spreadsheet": "score", "path": "score.xlsx", "overwrite": true}}"#,
        None,
    ),
    (
        "ob-1-4-1",
        r#"{"tool": "files_read", "args": {"path": "shopping_list.xlsx"}}
{"tool": "sheets_import", "args": {"path": "shopping_list.xlsx", "name": "shopping"}}
{"tool": "sheets_write", "args": {"spreadsheet": "shopping", "range": "A5", "values": [["yogurt", 2]]}}
{"tool": "sheets_export", "args": {"spreadsheet": "shopping", "path": "shopping_list.xlsx", "overwrite": true}}"#,
        None,
    ),
    (
        "ob-1-4-2",
        r#"{"tool": "files_read", "args": {"path": "salary.xlsx"}}
{"tool": "sheets_import", "args": {"path": "salary.xlsx", "name": "salary"}}
{"tool": "sheets_write", "args": {"spreadsheet": "salary", "range": "A5", "values": [["annual bonus", 50000]]}}
{"tool": "sheets_export", "args": {"spreadsheet": "salary", "path": "salary.xlsx", "overwrite": true}}"#,
        None,
    ),
    (
        "ob-1-4-3",
        r#"{"tool": "files_read", "args": {"path": "company_budget.xlsx"}}
{"tool": "sheets_import", "args": {"path": "company_budget.xlsx", "name": "budget"}}
{"tool": "sheets_write", "args": {"spreadsheet": "budget", "range": "A5", "values": [["utilities fee", 300]]}}
{"tool": "sheets_export", "args": {"spreadsheet": "budget", "path": "company_budget.xlsx", "overwrite": true}}"#,
        None,
    ),
    // Carol is row 21
    (
        "ob-1-5-0",
        r#"{"tool": "files_read", "args": {"path": "score.xlsx"}}
{"tool": "sheets_import", "args": {"path": "score.xlsx", "name": "score"}}
{"tool": "sheets_write", "args": {"spreadsheet": "score", "range": "B21", "values": [[98]]}}
{"tool": "sheets_export", "args": {"spreadsheet": "score", "path": "score.xlsx", "overwrite": true}}"#,
        None,
    ),
    // apple 2 -> 1
    (
        "ob-1-5-1",
        r#"{"tool": "files_read", "args": {"path": "shopping_list.xlsx"}}
{"tool": "sheets_import", "args": {"path": "shopping_list.xlsx", "name": "shopping"}}
{"tool": "sheets_write", "args": {"spreadsheet": "shopping", "range": "B2", "values": [[1]]}}
{"tool": "sheets_export", "args": {"spreadsheet": "shopping", "path": "shopping_list.xlsx", "overwrite": true}}"#,
        None,
    ),
    // 400000 / 365 = 1095.89, rounded down
    (
        "ob-1-5-2",
        r#"{"tool": "files_read", "args": {"path": "salary.xlsx"}}
{"tool": "sheets_import", "args": {"path": "salary.xlsx", "name": "salary"}}
{"tool": "sheets_write", "args": {"spreadsheet": "salary", "range": "A5", "values": [["average salary", 1095]]}}
{"tool": "sheets_export", "args": {"spreadsheet": "salary", "path": "salary.xlsx", "overwrite": true}}"#,
        None,
    ),
    // 2051000 * 1.1^3 = 2729881
    (
        "ob-1-5-3",
        r#"{"tool": "files_read", "args": {"path": "company_budget.xlsx"}}
{"tool": "sheets_import", "args": {"path": "company_budget.xlsx", "name": "budget"}}
{"tool": "sheets_write", "args": {"spreadsheet": "budget", "range": "A5", "values": [["predicted budget", 2729881]]}}
{"tool": "sheets_export", "args": {"spreadsheet": "budget", "path": "company_budget.xlsx", "overwrite": true}}"#,
        None,
    ),
    // the true averages: OfficeBench expects 80.5 for midterm1 (its value is wrong)
    (
        "ob-1-9-0",
        r#"{"tool": "files_read", "args": {"path": "score.xlsx"}}
{"tool": "sheets_import", "args": {"path": "score.xlsx", "name": "score"}}
{"tool": "sheets_write", "args": {"spreadsheet": "score", "range": "A22", "values": [["Average", 80.05, 78.3]]}}
{"tool": "sheets_export", "args": {"spreadsheet": "score", "path": "score.xlsx", "overwrite": true}}"#,
        None,
    ),
    (
        "ob-1-9-2",
        r#"{"tool": "files_read", "args": {"path": "salary.xlsx"}}
{"tool": "sheets_import", "args": {"path": "salary.xlsx", "name": "salary"}}
{"tool": "sheets_write", "args": {"spreadsheet": "salary", "range": "A5", "values": [["Total", 400000]]}}
{"tool": "sheets_export", "args": {"spreadsheet": "salary", "path": "salary.xlsx", "overwrite": true}}"#,
        None,
    ),
    (
        "ob-1-9-3",
        r#"{"tool": "files_read", "args": {"path": "company_budget.xlsx"}}
{"tool": "sheets_import", "args": {"path": "company_budget.xlsx", "name": "budget"}}
{"tool": "sheets_write", "args": {"spreadsheet": "budget", "range": "A5", "values": [["Total", 2051000]]}}
{"tool": "sheets_export", "args": {"spreadsheet": "budget", "path": "company_budget.xlsx", "overwrite": true}}"#,
        None,
    ),
    (
        "ob-1-9-4",
        r#"{"tool": "files_read", "args": {"path": "shopping_list.xlsx"}}
{"tool": "sheets_import", "args": {"path": "shopping_list.xlsx", "name": "shopping"}}
{"tool": "sheets_write", "args": {"spreadsheet": "shopping", "range": "A5", "values": [["Total", 6]]}}
{"tool": "sheets_export", "args": {"spreadsheet": "shopping", "path": "shopping_list.xlsx", "overwrite": true}}"#,
        None,
    ),
    // one student per class
    (
        "ob-1-6-0",
        r#"{"tool": "files_read", "args": {"path": "class_member.xlsx"}}
{"tool": "sheets_import", "args": {"path": "class_member.xlsx", "name": "class"}}
{"tool": "sheets_write", "args": {"spreadsheet": "class", "range": "B1", "values": [["Class"], [1], [2], [3], [4], [5]]}}
{"tool": "sheets_export", "args": {"spreadsheet": "class", "path": "class_member.xlsx", "overwrite": true}}"#,
        None,
    ),
    (
        "ob-1-6-1",
        r#"{"tool": "files_read", "args": {"path": "class_member.xlsx"}}
{"tool": "sheets_import", "args": {"path": "class_member.xlsx", "name": "class"}}
{"tool": "sheets_write", "args": {"spreadsheet": "class", "range": "B1", "values": [["Attendance"], ["Y"], ["Y"], ["Y"], ["Y"], ["Y"]]}}
{"tool": "sheets_export", "args": {"spreadsheet": "class", "path": "class_member.xlsx", "overwrite": true}}"#,
        None,
    ),
    // onion is the last row
    (
        "ob-1-7-5",
        r#"{"tool": "files_read", "args": {"path": "shopping_list.xlsx"}}
{"tool": "sheets_import", "args": {"path": "shopping_list.xlsx", "name": "shopping"}}
{"tool": "sheets_write", "args": {"spreadsheet": "shopping", "range": "A4", "values": [[null, null]]}}
{"tool": "sheets_export", "args": {"spreadsheet": "shopping", "path": "shopping_list.xlsx", "overwrite": true}}"#,
        None,
    ),
    (
        "ob-1-8-4",
        r#"{"tool": "files_read", "args": {"path": "shopping_list.xlsx"}}
{"tool": "sheets_import", "args": {"path": "shopping_list.xlsx", "name": "shopping"}}
{"tool": "sheets_write", "args": {"spreadsheet": "shopping", "range": "B1", "values": [[null], [null], [null], [null]]}}
{"tool": "sheets_export", "args": {"spreadsheet": "shopping", "path": "shopping_list.xlsx", "overwrite": true}}"#,
        None,
    ),
    (
        "ob-1-8-0",
        r#"{"tool": "files_read", "args": {"path": "score.xlsx"}}
{"tool": "sheets_import", "args": {"path": "score.xlsx", "name": "score"}}
{"tool": "sheets_write", "args": {"spreadsheet": "score", "range": "A1", "values": [[null, null, null], [null, null, null], [null, null, null], [null, null, null], [null, null, null], [null, null, null], [null, null, null], [null, null, null], [null, null, null], [null, null, null], [null, null, null], [null, null, null], [null, null, null], [null, null, null], [null, null, null], [null, null, null], [null, null, null], [null, null, null], [null, null, null], [null, null, null], [null, null, null]]}}
{"tool": "sheets_export", "args": {"spreadsheet": "score", "path": "score.xlsx", "overwrite": true}}"#,
        None,
    ),
    (
        "ob-1-10-0",
        r#"{"tool": "files_read", "args": {"path": "score.xlsx"}}"#,
        Some("The difference between the highest (100) and the lowest (60) midterm1 score is 40."),
    ),
    (
        "ob-1-11-2",
        r#"{"tool": "files_read", "args": {"path": "salary.xlsx"}}"#,
        Some(
            "The annual income is 420000 (200000 + 120000 + 100000), so the monthly income is 35000.",
        ),
    ),
    (
        "ob-1-19-3",
        r#"{"tool": "files_list", "args": {}}
{"tool": "files_read", "args": {"path": "contract_agreement.pdf"}}"#,
        Some("The effective date of the agreement is 2024-05-29."),
    ),
    (
        "ob-1-16-1",
        r#"{"tool": "files_write_docx", "args": {"path": "test.docx", "blocks": [{"type": "paragraph", "text": "This is a test file for task 1-16-1."}]}}"#,
        None,
    ),
    (
        "ob-2-38-1",
        r#"{"tool": "mail_send", "args": {"to": ["bob@example.com"], "subject": "party", "body": "Hi Bob,\n\nYou are invited to a party hosted by Jane Doe.\n\nAlice"}}"#,
        None,
    ),
    (
        "ob-2-40-1",
        r#"{"tool": "files_read", "args": {"path": "testbed/calendar/Bob.ics"}}
{"tool": "mail_send", "args": {"to": ["bob@example.com"], "subject": "Your class", "body": "Hi Bob,\n\nYou have class on 1 May 2024 from 16:00 to 18:00.\n\nAlice"}}"#,
        None,
    ),
    (
        "ob-2-40-2",
        r#"{"tool": "files_read", "args": {"path": "testbed/calendar/Bob.ics"}}
{"tool": "mail_send", "args": {"to": ["bob@example.com"], "subject": "Your events", "body": "Hi Bob,\n\nYour events on 1 May 2024: lunch 12:00-13:00, nap 13:00-14:00, class 16:00-18:00, dinner 18:30-19:30.\n\nAlice"}}"#,
        None,
    ),
    // both calendars have class 16:00-18:00 and dinner 18:30-19:30; OfficeBench forbids 'dinner'
    (
        "ob-2-40-3",
        r#"{"tool": "files_read", "args": {"path": "testbed/calendar/Bob.ics"}}
{"tool": "files_read", "args": {"path": "testbed/calendar/Tom.ics"}}
{"tool": "mail_send", "args": {"to": ["bob@example.com"], "subject": "Common events with Tom", "body": "Hi Bob,\n\nYou and Tom share these events on 1 May 2024: class 16:00-18:00 and dinner 18:30-19:30.\n\nAlice"}}
{"tool": "mail_send", "args": {"to": ["tom@example.com"], "subject": "Common events with Bob", "body": "Hi Tom,\n\nYou and Bob share these events on 1 May 2024: class 16:00-18:00 and dinner 18:30-19:30.\n\nAlice"}}"#,
        None,
    ),
    (
        "ob-2-46-0",
        r#"{"tool": "mail_list", "args": {}}
{"tool": "mail_read", "args": {"id": "m00001"}}
{"tool": "files_write_docx", "args": {"path": "class_canceling.docx", "blocks": [{"type": "heading", "level": 1, "text": "Class canceled"}, {"type": "paragraph", "text": "The class announced in the email is canceled."}]}}
{"tool": "files_export_pdf", "args": {"source": "class_canceling.docx", "path": "class_canceling.pdf"}}"#,
        None,
    ),
    // Facts in pictures and scans: the oracle looks at the picture (files_read shows it) and
    // types what it reads; it never calls files_ocr, so replaying it needs no OCR engine.
    (
        "ob-2-1-0",
        r#"{"tool": "files_read", "args": {"path": "power_failure_notification.jpg"}}
{"tool": "files_write", "args": {"path": "power_failure.txt", "content": "Electric Failure\n\nPower outage detected. Our team is working on resolving the issue.\n"}}
{"tool": "files_export_pdf", "args": {"source": "power_failure.txt", "path": "power_failure.pdf"}}
{"tool": "files_delete", "args": {"path": "power_failure.txt"}}"#,
        None,
    ),
    (
        "ob-2-5-0",
        r#"{"tool": "files_read", "args": {"path": "school_policy.jpg"}}
{"tool": "files_read", "args": {"path": "fellowship_application.pdf"}}"#,
        Some(
            "yes: the application gives the name (Alice Johnson), a valid email address, a statement of purpose of 105 words (at least 100 are required) and one reference (at least one is required).",
        ),
    ),
    (
        "ob-2-10-0",
        r#"{"tool": "files_read", "args": {"path": "students_scores.jpg"}}
{"tool": "sheets_create", "args": {"name": "score"}}
{"tool": "sheets_write", "args": {"spreadsheet": "score", "range": "A1", "values": [["Name", "Score"], ["Alice", 100], ["Bob", 222], ["Carol", 333], ["David", 250], ["Eva", 180]]}}
{"tool": "sheets_export", "args": {"spreadsheet": "score", "path": "score.xlsx"}}"#,
        None,
    ),
    (
        "ob-2-31-0",
        r#"{"tool": "files_read", "args": {"path": "car_trading.png"}}"#,
        Some(
            "The highest price of a car sold in March (2024) is $20,000: the Ford Mustang, on 2024-03-16.",
        ),
    ),
    (
        "ob-2-31-1",
        r#"{"tool": "files_read", "args": {"path": "car_trading.png"}}"#,
        Some("The highest price of all the car sales is $120,000: the Porsche Cayenne Turbo."),
    ),
    // the true figures: OfficeBench expects "264" and "64" (the mean cut to an integer; "64"
    // passes inside "264"), so the typed check, which compares numbers as numbers, fails
    (
        "ob-2-31-2",
        r#"{"tool": "files_read", "args": {"path": "students_scores.jpg"}}"#,
        Some(
            "The average of the 20 scores is 264.5 and their variance is 4004.65 (population; 4215.42 as a sample variance).",
        ),
    ),
    // the median of 20 scores is the mean of the 10th and 11th, 270 and 275; OfficeBench
    // expects "272"
    (
        "ob-2-31-3",
        r#"{"tool": "files_read", "args": {"path": "students_scores.jpg"}}"#,
        Some("The median score is 272.5 (the mean of 270 and 275)."),
    ),
    // the median of the 49 yearly values (1975-2023) is 98.38 (1990); OfficeBench expects
    // "91", the middle row of the table in date order (1999: 91.84), not the median
    (
        "ob-2-31-4",
        r#"{"tool": "files_read", "args": {"path": "house_price_index.jpg"}}"#,
        Some(
            "The median house price index of the 49 years 1975-2023 is 98.38 (the value of 1990).",
        ),
    ),
    (
        "ob-2-32-0",
        r#"{"tool": "files_read", "args": {"path": "company_budget.jpg"}}"#,
        Some(
            "Yes. The reimbursements come to $5,400,000 (35 salaries of $150,000 and $150,000 for machines), far above the yearly budget of $600,000.",
        ),
    ),
    (
        "ob-2-32-1",
        r#"{"tool": "files_read", "args": {"path": "company_trading_records.jpg"}}"#,
        Some(
            "smaller: the income (items sold) is $1,300 and the expenditure (items bought) is $2,550.",
        ),
    ),
    (
        "ob-2-45-0",
        r#"{"tool": "files_read", "args": {"path": "business_travel.jpg"}}
{"tool": "mail_send", "args": {"to": ["bob@example.com", "tom@example.com"], "subject": "bussiness_travel: business travel to New York", "body": "Dear Bob and Tom,\n\nYou are required to travel to our New York office for a business meeting. Please arrange your travel accordingly.\n\nBest regards,\nAlice"}}"#,
        None,
    ),
    (
        "ob-3-27-0",
        r#"{"tool": "files_read", "args": {"path": "Bob_card.png"}}
{"tool": "sheets_create", "args": {"name": "contact"}}
{"tool": "sheets_write", "args": {"spreadsheet": "contact", "range": "A1", "values": [["Name", "Phone", "Email", "Address"], ["Bob", "+1 (555) 123-4567", "Bob@example.com", "1234 Elm Street, Anytown, USA"]]}}
{"tool": "sheets_export", "args": {"spreadsheet": "contact", "path": "contact.xlsx"}}
{"tool": "mail_send", "args": {"to": ["alice@example.com"], "subject": "Bob", "body": "Hi Alice,\n\nHere is my contact information (also in contact.xlsx):\nName: Bob\nPhone: +1 (555) 123-4567\nEmail: Bob@example.com\nAddress: 1234 Elm Street, Anytown, USA\n\nBob", "attachments": ["contact.xlsx"]}}"#,
        None,
    ),
    // the IDs starting s1 are class 1, s2 class 2
    (
        "ob-3-39-0",
        r#"{"tool": "files_read", "args": {"path": "student_ids.png"}}
{"tool": "sheets_create", "args": {"name": "class1"}}
{"tool": "sheets_write", "args": {"spreadsheet": "class1", "range": "A1", "values": [["Name", "ID"], ["Alice", "s1001"], ["Bob", "s1002"], ["Carol", "s1003"], ["Frank", "s1006"], ["Grace", "s1007"], ["Hank", "s1008"], ["Jack", "s1010"]]}}
{"tool": "sheets_export", "args": {"spreadsheet": "class1", "path": "Class1/SID_Class_1.xlsx"}}
{"tool": "sheets_create", "args": {"name": "class2"}}
{"tool": "sheets_write", "args": {"spreadsheet": "class2", "range": "A1", "values": [["Name", "ID"], ["David", "s2004"], ["Eva", "s2005"], ["Ivy", "s2009"]]}}
{"tool": "sheets_export", "args": {"spreadsheet": "class2", "path": "Class2/SID_Class_2.xlsx"}}"#,
        None,
    ),
    // a scan: the transcript's page has no text layer
    (
        "ob-3-69-0",
        r#"{"tool": "files_read", "args": {"path": "transcripts.pdf"}}
{"tool": "sheets_create", "args": {"name": "score"}}
{"tool": "sheets_write", "args": {"spreadsheet": "score", "range": "A1", "values": [["Student", "Year", "Term", "GPA", "Credits", "Grade points"], ["Teddy Roosevelt", "2014/2015", "Fall", 4, 2, "=D2*E2"], ["Teddy Roosevelt", "2014/2015", "Winter", 4, 1, "=D3*E3"], ["Teddy Roosevelt", "2014/2015", "Spring", 3.5, 2, "=D4*E4"], ["Teddy Roosevelt", "2014/2015", "Summer", 4, 1, "=D5*E5"], ["Teddy Roosevelt", "2015/2016", "Fall", 4, 2, "=D6*E6"], ["Teddy Roosevelt", "2015/2016", "Winter", 4, 1, "=D7*E7"], ["Teddy Roosevelt", "2015/2016", "Spring", 3.5, 2, "=D8*E8"], ["Teddy Roosevelt", "2015/2016", "Summer", 4, 1, "=D9*E9"], ["Teddy Roosevelt", "2016/2017", "Fall", 2.5, 2, "=D10*E10"], ["Teddy Roosevelt", "2016/2017", "Winter", 4, 1, "=D11*E11"], ["Teddy Roosevelt", "2016/2017", "Spring", 3, 2, "=D12*E12"], ["Teddy Roosevelt", "2016/2017", "Summer", 4, 1, "=D13*E13"], ["Teddy Roosevelt", "2017/2018", "Fall", 4, 2, "=D14*E14"], ["Teddy Roosevelt", "2017/2018", "Winter", 4, 1, "=D15*E15"], ["Teddy Roosevelt", "2017/2018", "Spring", 5, 2, "=D16*E16"], ["Weighted GPA", null, null, "=SUM(F2:F16)/SUM(E2:E16)", "=SUM(E2:E16)", "=SUM(F2:F16)"]]}}
{"tool": "sheets_export", "args": {"spreadsheet": "score", "path": "score.xlsx"}}
{"tool": "files_write_docx", "args": {"path": "score.docx", "blocks": [{"type": "heading", "level": 1, "text": "Scores of Teddy Roosevelt"}, {"type": "table", "rows": [["Year", "Term", "GPA", "Credits"], ["2014/2015", "Fall", "4.00", "2"], ["2014/2015", "Winter", "4.00", "1"], ["2014/2015", "Spring", "3.50", "2"], ["2014/2015", "Summer", "4.00", "1"], ["2015/2016", "Fall", "4.00", "2"], ["2015/2016", "Winter", "4.00", "1"], ["2015/2016", "Spring", "3.50", "2"], ["2015/2016", "Summer", "4.00", "1"], ["2016/2017", "Fall", "2.50", "2"], ["2016/2017", "Winter", "4.00", "1"], ["2016/2017", "Spring", "3.00", "2"], ["2016/2017", "Summer", "4.00", "1"], ["2017/2018", "Fall", "4.00", "2"], ["2017/2018", "Winter", "4.00", "1"], ["2017/2018", "Spring", "5.00", "2"]]}, {"type": "paragraph", "text": "Teddy Roosevelt: weighted GPA 3.78 over 23 credits."}]}}"#,
        None,
    ),
];

/// The authored oracle of `id`, if there is one.
pub fn oracle(id: &str) -> Option<Oracle> {
    let (_, calls, message) = TABLE.iter().find(|(t, _, _)| *t == id)?;
    let calls: Vec<Value> = calls
        .lines()
        .filter(|l| !l.trim().is_empty())
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    Some(Oracle {
        calls,
        message: message.map(str::to_string),
    })
}

/// Every task id the table covers.
pub fn ids() -> Vec<&'static str> {
    TABLE.iter().map(|(t, _, _)| *t).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_authored_line_is_a_tool_call() {
        for (id, calls, _) in TABLE {
            for (i, l) in calls
                .lines()
                .enumerate()
                .filter(|(_, l)| !l.trim().is_empty())
            {
                let v: Value =
                    serde_json::from_str(l).unwrap_or_else(|e| panic!("{id} line {}: {e}", i + 1));
                assert!(
                    v.get("tool").and_then(Value::as_str).is_some(),
                    "{id} line {}",
                    i + 1
                );
            }
        }
        let mut seen = std::collections::BTreeSet::new();
        assert!(ids().iter().all(|i| seen.insert(*i)), "duplicate ids");
    }
}
