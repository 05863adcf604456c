"""Five documents of a small company and five questions a new user asks about them, each with the sentence that
answers it: the material of the new-user tests of request finding."""

from __future__ import annotations

REMOTE_WORK = """Remote Work Policy

This policy sets out when and how employees of Brightline Studio may work away from the office. It applies to \
every permanent employee after the end of the probation period. Team leads approve remote work schedules at the \
start of each quarter, and changes during a quarter are agreed with the team lead in writing.

Employees may work from home on up to three days a week. Core hours are from ten in the morning to three in the \
afternoon, and employees are reachable on the team chat during those hours. Meetings with clients are held in the \
office whenever the client asks for it.

Employees may work from another country for at most 20 working days per calendar year. Working abroad needs the \
approval of the people team at least two weeks before the trip, because tax and insurance rules differ between \
countries. Days abroad that are not approved count as unpaid leave.

The company provides a laptop, a headset and a second screen for home working. Employees keep their home \
workplace safe and tidy, and report any accident during working hours to the people team within a day."""

EXPENSES = """Expense Policy

Brightline Studio reimburses costs that employees incur for their work, when they are reasonable and approved. \
Claims are submitted in the expense tool with a photo of the receipt. The finance team pays approved claims with \
the next monthly salary.

Train travel is reimbursed in second class; first class is allowed for journeys of more than four hours. Taxis \
are reimbursed only late at night or when no public transport runs. Hotel nights are booked through the travel \
desk and are paid by the company directly.

Meals during a business trip are reimbursed up to 45 euros per day, alcohol excluded. Client dinners need the \
approval of a director beforehand. Claims older than three months are no longer accepted, whatever the reason.

Home office purchases are reimbursed up to 300 euros every two years, for a chair, a desk lamp or a keyboard. \
Internet costs at home are covered by the monthly allowance of 25 euros and are not claimed separately."""

LEAVE = """Leave and Holidays

Every full-time employee has 27 days of paid holiday per year, on top of public holidays. Part-time employees \
have holidays in proportion to their working hours. Holidays are requested in the people tool at least two weeks \
in advance for any absence longer than three days.

Up to five unused holiday days may be carried over into the next year; they must be taken before the end of \
March, or they lapse. The studio closes between Christmas and New Year, and three holiday days are used for that \
closure every year.

Sick leave is reported to the team lead before ten in the morning on the first day. From the fourth day of \
illness a doctor's note is needed. Parental leave follows the law, and the studio adds two weeks of fully paid \
leave for the second parent."""

SECURITY = """IT Security Rules

Every laptop is encrypted and locks itself after five minutes without use. Passwords are at least fourteen \
characters long and are kept in the company password manager. Two-factor authentication is switched on for every \
account that offers it.

Client files are stored only on the company drive, never on personal devices or private cloud accounts. Files \
shared with people outside the studio use links that expire after 30 days. Printed client documents are shredded \
after use.

A lost or stolen laptop is reported to the IT helpdesk within two hours, by phone, at any time of day. The \
helpdesk then wipes the device remotely. Software is installed only from the company catalogue; other software \
needs the approval of the IT lead."""

ONBOARDING = """Onboarding Guide

New employees receive their laptop and accounts on the first morning, from the IT helpdesk. Each new employee has \
a buddy from another team for the first six weeks, who answers questions about how the studio works.

In the first week, new employees meet every team lead for half an hour. At the end of the first month the team \
lead holds a feedback conversation, and another one at the end of the probation period, which lasts four months.

The studio's all-hands meeting takes place every second Thursday at four in the afternoon. New employees \
introduce themselves there in their second week. Lunch is shared in the kitchen on Fridays and paid for by the \
studio."""

DOCUMENTS = (REMOTE_WORK, EXPENSES, LEAVE, SECURITY, ONBOARDING)

#: ``(question, the sentence of the documents that answers it)``.
QUESTIONS = (
    ("How many days can employees work from another country?",
     "Employees may work from another country for at most 20 working days per calendar year."),
    ("How much is reimbursed for meals on a business trip?",
     "Meals during a business trip are reimbursed up to 45 euros per day, alcohol excluded."),
    ("How many unused holiday days can be carried over?",
     "Up to five unused holiday days may be carried over into the next year; they must be taken before the end of "
     "March, or they lapse."),
    ("How quickly must a lost laptop be reported?",
     "A lost or stolen laptop is reported to the IT helpdesk within two hours, by phone, at any time of day."),
    ("How long does the probation period last?",
     "At the end of the first month the team lead holds a feedback conversation, and another one at the end of the "
     "probation period, which lasts four months."),
)


def joined(documents: tuple[str, ...] = DOCUMENTS) -> str:
    """The documents one after another, as a user pastes them."""
    return "\n\n".join(documents)
