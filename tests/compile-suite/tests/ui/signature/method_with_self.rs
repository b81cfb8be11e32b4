use toolgate::prelude::*;

struct Crm;

impl Crm {
    /// Look up a customer.
    #[tool(permission = "staff")]
    fn find_customer(&self, name: String) -> String {
        name
    }
}

fn main() {}
